import Logging
import StepSignCrypto
import StepSignFormat
import StepSignSystem

/// A C2SP tlog-witness v1 (SPEC §5.6): for each log it is configured with, it cosigns a
/// checkpoint only if a trusted key of the log signed it and it extends, by a verified
/// consistency proof, the latest checkpoint it cosigned of that log, which it keeps durably.
///
/// The HTTP server (``WitnessHTTPServer``) calls ``addCheckpoint(body:)``; it blocks (the
/// state's `fsync`), so the server runs it on a thread pool.
public final class Witness: Sendable {
    /// The witness's verifier key (type 0x04), which logs and verifiers configure.
    public let verifierKey: NoteVerifierKey
    private let directory: WitnessStateDirectory
    private let logs: [String: WitnessedLog]
    private let now: @Sendable () -> UInt64
    private let logger: Logger

    /// A witness keeping its state in `directory`, trusting `logKeys`, each for the log of its
    /// name's origin (stepsign's logs name their keys after their origin; several keys may
    /// share one). `now` gives the time in seconds since the epoch that cosignatures carry.
    public convenience init(directory: WitnessStateDirectory, logKeys: [NoteVerifierKey],
                            now: @escaping @Sendable () -> UInt64, logger: Logger) throws(WitnessSetupError) {
        try self.init(directory: directory, logs: logKeys.map { (origin: $0.name, key: $0) }, now: now, logger: logger)
    }

    /// A witness trusting each `key` for the log of `origin` (a log whose key is named otherwise
    /// than its origin, as sum.golang.org's key signs "go.sum database tree").
    public init(directory: WitnessStateDirectory, logs: [(origin: String, key: NoteVerifierKey)],
                now: @escaping @Sendable () -> UInt64, logger: Logger) throws(WitnessSetupError) {
        guard !logs.isEmpty else { throw WitnessSetupError("no log to witness (--log VKEY)") }
        var keysByOrigin: [String: [NoteVerifierKey]] = [:]
        for (origin, key) in logs {
            guard key.type != .cosignatureV1 else {
                throw WitnessSetupError("\(key.name)'s key is a cosignature key, not a log's key")
            }
            guard !origin.isEmpty, !origin.contains("\n") else { throw WitnessSetupError("an origin is one non-empty line") }
            keysByOrigin[origin, default: []].append(key)
        }
        var logs: [String: WitnessedLog] = [:]
        for (origin, keys) in keysByOrigin {
            var latest: LogCheckpoint?
            if let note = try directory.latest(origin: origin) {
                do { latest = try LogCheckpoint(text: note.text) } catch {
                    throw WitnessSetupError("the stored checkpoint of \(origin): \(error)")
                }
            }
            logs[origin] = WitnessedLog(origin: origin, keys: keys, latest: latest)
        }
        self.verifierKey = directory.verifierKey
        self.directory = directory
        self.logs = logs
        self.now = now
        self.logger = logger
    }

    /// The size and root last cosigned of `origin`'s log (nil: none, or an unknown origin).
    public func latest(origin: String) -> LogCheckpoint? {
        logs[origin]?.current
    }

    /// Answers an `add-checkpoint` body: the witness's cosignature line (and a newline) of the
    /// submitted checkpoint, or why not.
    public func addCheckpoint(body: some Collection<UInt8>) -> Result<String, WitnessRefusal> {
        do throws(WitnessRefusal) {
            return .success(try cosign(try AddCheckpointRequest(body: body)))
        } catch {
            return .failure(error)
        }
    }

    func cosign(_ request: AddCheckpointRequest) throws(WitnessRefusal) -> String {
        let checkpoint: LogCheckpoint
        do { checkpoint = try LogCheckpoint(text: request.checkpoint.text) } catch {
            throw .badRequest("the note is not a checkpoint: \(error)")
        }
        guard let log = logs[checkpoint.origin] else { throw .unknownOrigin(checkpoint.origin) }
        do { _ = try request.checkpoint.verifiedKeys(log.keys) } catch {
            throw .untrustedSignature("\(error)")
        }
        guard request.oldSize <= checkpoint.size else {
            throw .badRequest("the old size \(request.oldSize) is above the checkpoint's \(checkpoint.size)")
        }
        do {
            try log.advance(to: checkpoint, request: request) { note in
                try directory.store(note, origin: checkpoint.origin)
            }
        } catch {
            switch error {
            case .inconsistent:
                logSplitViewEvidence(checkpoint, error)
            case let .conflict(size) where size == checkpoint.size && request.oldSize == size:
                logSplitViewEvidence(checkpoint, error)
            case .storageFailed:
                logger.critical("the witness could not store its state; it cosigns nothing", metadata: [
                    "origin": "\(checkpoint.origin)", "error": "\(error)",
                ])
            default:
                break
            }
            throw error
        }
        var cosigned = request.checkpoint
        do { try cosigned.cosign(name: verifierKey.name, key: directory.signingKey, timestamp: now()) } catch {
            throw .storageFailed("cosigning: \(error)")
        }
        guard let line = cosigned.signatures.last else { throw .storageFailed("cosigning made no line") }
        return line.line + "\n"
    }

    /// A signed checkpoint that does not extend what was cosigned is evidence that the log may
    /// show two histories (C2SP lets a witness log it).
    private func logSplitViewEvidence(_ checkpoint: LogCheckpoint, _ error: WitnessRefusal) {
        logger.error("a signed checkpoint does not extend the one cosigned", metadata: [
            "origin": "\(checkpoint.origin)", "size": "\(checkpoint.size)",
            "root": "\(Base64.encode(checkpoint.rootHash))", "reason": "\(error)",
        ])
    }
}
