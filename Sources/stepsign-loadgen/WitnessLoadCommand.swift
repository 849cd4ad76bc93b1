import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import StepSignCrypto
import StepSignFormat

/// `witness-load`: the cost of a witness's cosignature (SPEC §5.6) over HTTP, as
/// `stepsign-witness serve` answers C2SP tlog-witness v1's `add-checkpoint`. `--logs` logs
/// (Ed25519 keys from fixed seeds, origins `bench.example/log-N`) each grow by one leaf per
/// checkpoint, and each log's checkpoints go in order on one keep-alive connection, the logs at
/// once: every request is a cosignature the witness must check and make durable. The bodies
/// (old size, consistency proof, signed checkpoint) are made before the clock starts.
/// `--print-keys` prints the logs' verifier keys (for `--log`) and exits.
struct WitnessLoadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "witness-load",
                                                    abstract: "Checkpoints of several logs to a witness over HTTP.")
    @Option(help: "The witness's address.")
    var host = "127.0.0.1"
    @Option(help: "The witness's port.")
    var port = 7380
    @Option(help: "Logs submitting at once, one connection each.")
    var logs = 1
    @Option(help: "Checkpoints per log.")
    var checkpoints = 1000
    @Flag(help: "Print the logs' verifier keys and exit.")
    var printKeys = false

    func run() throws {
        let keys = try (0..<logs).map { try Ed25519PrivateKey(seed: [UInt8](repeating: UInt8(1 + $0 % 250), count: 32)) }
        let origins = (0..<logs).map { "bench.example/log-\($0)" }
        if printKeys {
            for (origin, key) in zip(origins, keys) { print(try NoteVerifierKey(name: origin, ed25519: key.publicKey)) }
            return
        }
        signal(SIGPIPE, SIG_IGN)
        // Every run starts at size 0 (old 0): the bench gives each run a fresh witness state.
        var bodies: [[[UInt8]]] = []
        for (origin, key) in zip(origins, keys) {
            bodies.append(try Self.bodies(origin: origin, key: key, count: checkpoints))
        }
        let clock = RunClock()
        var latencies = [[UInt64]](repeating: [], count: logs)
        var failures = [Int](repeating: 0, count: logs)
        let start = monotonicNanoseconds()
        var threads: [pthread_t] = []
        let contexts = (0..<logs).map { index in
            WitnessLoadThread(host: host, port: port, bodies: bodies[index])
        }
        for context in contexts {
            var thread = pthread_t()
            let box = Unmanaged.passRetained(context).toOpaque()
            guard pthread_create(&thread, nil, { raw in
                let context = Unmanaged<WitnessLoadThread>.fromOpaque(raw!).takeRetainedValue()
                context.run()
                return nil
            }, box) == 0 else { fail("pthread_create failed") }
            threads.append(thread)
        }
        for thread in threads { pthread_join(thread, nil) }
        let elapsed = Double(monotonicNanoseconds() - start) / 1e9
        for (index, context) in contexts.enumerated() {
            latencies[index] = context.latencies
            failures[index] = context.failures
        }
        var all = latencies.flatMap { $0 }
        all.sort()
        let cosigned = all.count
        clock.report([("mode", "witness-load"), ("logs", "\(logs)"), ("cosigned", "\(cosigned)"),
                      ("refused", "\(failures.reduce(0, +))"), ("seconds", fmt(elapsed)),
                      ("throughput", fmt(Double(cosigned) / elapsed, 1)),
                      ("p50_ms", fmt(percentile(all, 0.5), 3)), ("p99_ms", fmt(percentile(all, 0.99), 3))])
    }

    /// The HTTP requests of `count` checkpoints of one log, sizes 1 … count, each from the last.
    static func bodies(origin: String, key: Ed25519PrivateKey, count: Int) throws -> [[UInt8]] {
        var frontier = MerkleFrontier()
        var nodes: [MerkleNode: [UInt8]] = [:]
        var requests: [[UInt8]] = []
        let salt = (0..<8).map { _ in UInt8.random(in: 0...255) }
        for size in 1...Int64(count) {
            for (node, hash) in frontier.append(leafHash: MerkleHash.leaf(salt + Array("entry \(size)".utf8))) {
                nodes[node] = hash
            }
            let proof = try MerkleTree.consistencyPlan(from: size - 1, to: size).hashes(nodes)
            var note = try SignedNote(text: try LogCheckpoint(origin: origin, size: size, rootHash: frontier.root).text)
            try note.sign(name: origin, ed25519: key)
            var body = "old \(size - 1)\n"
            for hash in proof { body += Base64.encode(hash) + "\n" }
            body += "\n" + note.serialized
            requests.append(Array("POST /add-checkpoint HTTP/1.1\r\nHost: witness\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n\r\n".utf8) + Array(body.utf8))
        }
        return requests
    }
}

/// One log's submitter: its requests in order on one keep-alive TCP connection.
final class WitnessLoadThread {
    let host: String
    let port: Int
    let bodies: [[UInt8]]
    var latencies: [UInt64] = []
    var failures = 0

    init(host: String, port: Int, bodies: [[UInt8]]) {
        self.host = host
        self.port = port
        self.bodies = bodies
    }

    func run() {
        let fd = connectTCP(host: host, port: port)
        defer { close(fd) }
        var buffer: [UInt8] = []
        latencies.reserveCapacity(bodies.count)
        for request in bodies {
            let start = monotonicNanoseconds()
            var sent = 0
            while sent < request.count {
                let n = request[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { fail("write: \(String(cString: strerror(errno)))") }
                sent += n
            }
            let status = readResponse(fd, &buffer)
            if status == 200 { latencies.append(monotonicNanoseconds() - start) } else { failures += 1 }
        }
    }

    /// Reads one HTTP/1.1 response (headers and a Content-Length body); returns its status.
    private func readResponse(_ fd: Int32, _ buffer: inout [UInt8]) -> Int {
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            if let end = headerEnd(buffer) {
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
                var length = 0
                for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                    length = Int(line.split(separator: ":")[1].trimmingSpaces) ?? 0
                }
                if buffer.count >= end + 4 + length {
                    buffer.removeFirst(end + 4 + length)
                    return status
                }
            }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { fail("the witness closed the connection") }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    private func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i
        }
        return nil
    }
}

extension Substring {
    var trimmingSpaces: String { String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed()) }
}

/// A connected TCP socket to `host` (an IPv4 address) and `port`, with Nagle off; exits on failure.
func connectTCP(host: String, port: Int) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { fail("socket: \(String(cString: strerror(errno)))") }
    var one: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { fail("not an IPv4 address: \(host)") }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard result == 0 else { fail("connect \(host):\(port): \(String(cString: strerror(errno)))") }
    return fd
}
