import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// `batch`: level-1 batches (SPEC §3.4) on `--connections` connections for `--seconds`: each
/// connection sends `authenticateUserAndSignBatch` with `--items` payloads, answers the one
/// password challenge, and counts the signatures of the reply. Reports signatures per second
/// (the step-up's scrypt amortised over the batch) and each batch's round trip.
struct BatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "batch",
                                                    abstract: "Level-1 batches behind one password each.")
    @OptionGroup var target: StepUpTarget
    @Option(help: "Connections, each sending one batch at a time.")
    var connections = 4
    @Option(help: "Items per batch (the request must fit one 64 KiB line).")
    var items = 1000
    @Option(name: .customLong("payload-bytes"), help: "Bytes of payload per item.")
    var payloadBytes = 24
    @Option(help: "Stop starting batches after this many seconds.")
    var seconds = 10.0

    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        let password = Level1Command.firstLine(of: target.passwordFile)
        var request: [UInt8] = Array(#"{"id":1,"op":"authenticateUserAndSignBatch","user":"\#(target.user)","authLevel":1,"authenticatorType":0,"items":["#.utf8)
        for index in 0..<items {
            if index > 0 { request.append(UInt8(ascii: ",")) }
            request += Array(#"{"payload":""#.utf8) + payload(index, bytes: payloadBytes) + Array(#"","reason":"Benchmark"}"#.utf8)
        }
        request += Array("]}\n".utf8)
        let answer = Array(#"{"id":2,"op":"setPassword","password":"\#(password)","challengeMode":12}"#.utf8) + [0x0A]
        let clock = RunClock()
        let start = monotonicNanoseconds()
        let deadline = start + UInt64(seconds * 1e9)
        let workers = (0..<connections).map { _ in
            BatchWorker(socket: target.socket, request: request, answer: answer, items: items, deadline: deadline)
        }
        var threads: [pthread_t] = []
        for worker in workers {
            var thread = pthread_t()
            let box = Unmanaged.passRetained(worker).toOpaque()
            guard pthread_create(&thread, nil, { raw in
                Unmanaged<BatchWorker>.fromOpaque(raw!).takeRetainedValue().run()
                return nil
            }, box) == 0 else { fail("pthread_create failed") }
            threads.append(thread)
        }
        for thread in threads { pthread_join(thread, nil) }
        let elapsed = Double(monotonicNanoseconds() - start) / 1e9
        let latencies = workers.flatMap(\.latencies).sorted()
        let signatures = latencies.count * items
        clock.report([("mode", "batch"), ("connections", "\(connections)"), ("items", "\(items)"),
                      ("batches", "\(latencies.count)"), ("signatures", "\(signatures)"),
                      ("failed", "\(workers.reduce(0) { $0 + $1.failures })"), ("seconds", fmt(elapsed)),
                      ("throughput", fmt(Double(signatures) / elapsed, 1)),
                      ("batch_p50_ms", fmt(percentile(latencies, 0.5), 2)), ("batch_p99_ms", fmt(percentile(latencies, 0.99), 2))])
    }
}

/// One connection's batches, on a thread of its own.
final class BatchWorker {
    let socket: String
    let request: [UInt8]
    let answer: [UInt8]
    let items: Int
    let deadline: UInt64
    var latencies: [UInt64] = []
    var failures = 0

    init(socket: String, request: [UInt8], answer: [UInt8], items: Int, deadline: UInt64) {
        self.socket = socket
        self.request = request
        self.answer = answer
        self.items = items
        self.deadline = deadline
    }

    func run() {
        let fd = connectUnix(socket)
        let reader = LineReader(fd: fd)
        while monotonicNanoseconds() < deadline {
            let start = monotonicNanoseconds()
            writeAll(fd, request)
            let challenge = String(decoding: reader.line(), as: UTF8.self)
            guard challenge.contains(#""event":"getPassword""#) else { fail("no password challenge: \(challenge.prefix(300))") }
            writeAll(fd, answer)
            let reply = reader.line()
            let text = String(decoding: reply.prefix(200), as: UTF8.self)
            if text.contains(#""event":"onAuthenticateUserAndSignBatch""#), countSignatures(reply) == items {
                latencies.append(monotonicNanoseconds() - start)
            } else {
                failures += 1
                if failures == 1 { printError("stepsign-loadgen: batch failed: \(text)") }
            }
        }
        close(fd)
    }

    /// How many `payloadSignature` members the reply line holds.
    private func countSignatures(_ line: [UInt8]) -> Int {
        let needle = Array(#""payloadSignature":"ey"#.utf8)
        var count = 0, index = 0
        while index + needle.count <= line.count {
            if line[index] == needle[0], line[index..<index + needle.count].elementsEqual(needle) {
                count += 1
                index += needle.count
            } else {
                index += 1
            }
        }
        return count
    }
}
