import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import StepSignFormat
import StepSignWitness

/// Submits the daemon's checkpoints to its witnesses (C2SP tlog-witness v1, SPEC §5.6) and
/// stores their cosignatures through the daemon, round after round.
///
/// A round takes the log's head (a checkpoint the daemon signs) and offers it to every witness
/// at once, each with a consistency proof from the size the witness last cosigned. A 409 tells
/// that size, and the checkpoint is offered again from it. A refusal a retry cannot change
/// (400, 403, 404, 422, 409 at the witness's own size, a cosignature that does not verify) is
/// an alarm, logged at critical, and that checkpoint is not offered again; a newer one is. A
/// witness that cannot be reached is retried after a back-off. The pusher only reads from the
/// daemon and writes cosignatures: signing never waits on it.
actor WitnessPusher: Service {
    private var targets: [WitnessTarget]
    private let link: DaemonLink
    private let client: HTTPClient
    private let interval: Duration
    private let requestTimeout: TimeAmount
    private let logger: Logger

    init(targets: [WitnessTarget], link: DaemonLink, interval: Duration, requestTimeout: TimeAmount, logger: Logger) {
        self.targets = targets
        self.link = link
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: .seconds(5), read: requestTimeout)
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.interval = interval
        self.requestTimeout = requestTimeout
        self.logger = logger
    }

    /// Rounds every `interval`, and at once when a `waitForProof` asks for one, until graceful
    /// shutdown.
    func run() async throws {
        logger.notice("pushing checkpoints", metadata: ["witnesses": "\(targets.map(\.name).joined(separator: ","))"])
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            _ = await round()
            try? await cancelWhenGracefulShutdown { try await self.untilNextRound() }
        }
        try await close()
    }

    /// Waits for the next round: `interval`, or less when a caller of `waitForProof` asks the
    /// daemon for a witnessed checkpoint (SPEC §5.6; the daemon answers the long poll
    /// `admin.awaitCheckpointRequest` then). A daemon that cannot be asked (one without the
    /// operation, or not reached) leaves the plain interval.
    private func untilNextRound() async throws {
        let end = ContinuousClock.now + interval
        while ContinuousClock.now < end {
            try Task.checkCancellation()
            let left = end - ContinuousClock.now
            let seconds = max(1, Int(left.components.seconds))
            do {
                if try await link.awaitCheckpointRequest(seconds: seconds) { return }
            } catch {
                logger.debug("cannot wait for checkpoint requests; waiting out the interval", metadata: ["error": "\(error)"])
                try await Task.sleep(until: end)
                return
            }
        }
    }

    func close() async throws {
        try await client.shutdown()
    }

    /// One round: the log's head offered to every witness; what happened with each.
    func round() async -> [SubmissionOutcome] {
        let head: SignedNote
        let checkpoint: LogCheckpoint
        do {
            head = try await link.consistencyProof(from: 0, to: nil).checkpoint
            checkpoint = try LogCheckpoint(text: head.text)
        } catch {
            logger.warning("cannot read the log's head from stepsignd", metadata: ["error": "\(error)"])
            return targets.map { SubmissionOutcome(witness: $0.name, treeSize: 0, kind: .retry, detail: "\(error)") }
        }
        let now = ContinuousClock.now
        let current = targets
        let results = await withTaskGroup(of: (Int, WitnessTarget, SubmissionOutcome).self) { group in
            for (index, target) in current.enumerated() {
                group.addTask { [self] in
                    var target = target
                    let outcome = await self.offer(head, checkpoint, to: &target, now: now)
                    return (index, target, outcome)
                }
            }
            var results: [(Int, WitnessTarget, SubmissionOutcome)] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }
        }
        for (index, target, outcome) in results {
            targets[index] = target
            report(outcome)
        }
        return results.map(\.2)
    }

    private func report(_ outcome: SubmissionOutcome) {
        let metadata: Logger.Metadata = ["witness": "\(outcome.witness)", "treeSize": "\(outcome.treeSize)",
                                         "detail": "\(outcome.detail)"]
        switch outcome.kind {
        case .alarm: logger.critical("witness alarm", metadata: metadata)
        case .retry: logger.warning("witness not reached; retrying later", metadata: metadata)
        case .cosigned: logger.info("checkpoint cosigned", metadata: metadata)
        case .alreadyCosigned, .waiting: logger.debug("nothing to submit", metadata: metadata)
        }
    }

    /// Offers `head` (of `checkpoint`) to one witness, following its 409s.
    nonisolated private func offer(_ head: SignedNote, _ checkpoint: LogCheckpoint, to target: inout WitnessTarget,
                                   now: ContinuousClock.Instant) async -> SubmissionOutcome {
        let size = checkpoint.size
        func outcome(_ kind: SubmissionOutcome.Kind, _ detail: String) -> SubmissionOutcome {
            SubmissionOutcome(witness: target.name, treeSize: size, kind: kind, detail: detail)
        }
        if !head.cosigners([target.key]).isEmpty {
            target.knownSize = max(target.knownSize ?? 0, size)
            return outcome(.alreadyCosigned, "the checkpoint carries its cosignature")
        }
        if let retryAt = target.retryAt, now < retryAt { return outcome(.waiting, "backing off") }
        if target.refusedSize == size { return outcome(.waiting, "this checkpoint was refused; waiting for a newer one") }
        // At most a few 409s in a row: each names a size, and a witness that keeps moving is
        // being fed by someone else (another daemon of the log); the next round catches up.
        for _ in 0..<3 {
            let old = target.knownSize ?? 0
            guard old <= size else {
                return outcome(.waiting, "the witness cosigned size \(old), above this daemon's head")
            }
            let proof: [[UInt8]]
            do {
                proof = old == 0 || old == size ? [] : try await link.consistencyProof(from: old, to: size).proof
            } catch {
                return outcome(.retry, "no consistency proof from \(old): \(error)")
            }
            let request = AddCheckpointRequest(oldSize: old, proof: proof, checkpoint: head)
            let reply: (status: UInt, body: String)
            do {
                reply = try await post(request.body, to: target.endpoint)
            } catch {
                target.failures += 1
                target.retryAt = ContinuousClock.now + WitnessTarget.backOff(failures: target.failures)
                return outcome(.retry, "\(error)")
            }
            switch reply.status {
            case 200:
                target.failures = 0
                target.retryAt = nil
                let lines: [SignedNote.Signature]
                do { lines = try WitnessResponse.cosignatures(reply.body, of: head, witness: target.key) } catch {
                    target.refusedSize = size
                    return outcome(.alarm, "its reply is not a valid cosignature: \(error)")
                }
                do { try await link.addCosignatures(treeSize: size, lines: lines.map(\.line)) } catch {
                    return outcome(.retry, "stepsignd did not store the cosignature: \(error)")
                }
                target.knownSize = size
                return outcome(.cosigned, "cosigned from size \(old)")
            case 409:
                target.failures = 0
                guard let witnessSize = try? WitnessResponse.conflictSize(reply.body) else {
                    target.refusedSize = size
                    return outcome(.alarm, "409 without a tree size")
                }
                if witnessSize == old {
                    // The witness holds a tree of the size we offered from with another root,
                    // or of our size with another root: two histories.
                    target.refusedSize = size
                    target.knownSize = witnessSize
                    return outcome(.alarm, "the witness holds another tree of size \(witnessSize): the log shows two histories")
                }
                target.knownSize = witnessSize
                continue
            case 400, 403, 404, 422:
                target.failures = 0
                target.refusedSize = size
                let why = switch reply.status {
                case 403: "the witness trusts none of the log's keys (403)"
                case 404: "the witness does not know the log's origin (404)"
                case 422: "the witness says the log does not extend what it cosigned (422)"
                default: "the witness refused the request as malformed (400)"
                }
                return outcome(.alarm, why + ": " + String(reply.body.prefix(200)))
            default:
                target.failures += 1
                target.retryAt = ContinuousClock.now + WitnessTarget.backOff(failures: target.failures)
                return outcome(.retry, "HTTP \(reply.status): \(reply.body.prefix(200))")
            }
        }
        return outcome(.waiting, "the witness's size kept changing; trying again next round")
    }

    /// POSTs `body`; the status and at most 64 KiB of the reply.
    nonisolated private func post(_ body: String, to url: String) async throws -> (status: UInt, body: String) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await client.execute(request, timeout: requestTimeout)
        let bytes = try await response.body.collect(upTo: 64 * 1024)
        return (response.status.code, String(buffer: bytes))
    }
}
