// stepsign-loadgen: the load generator of `scripts/bench`.
//
// Plain POSIX: Unix stream sockets on this machine only, one thread, epoll. Every mode is
// bounded in request count and in time. It prints one line of `key=value` pairs, including
// its own CPU time (getrusage), so that a slow client is not mistaken for a slow server.
//
//   stepsign-loadgen sign   --socket P[,P2...] --connections N --window W --requests R --seconds S [--payload-bytes 200] [--user U]
//   stepsign-loadgen agent  --socket P --connections N --window W --requests R --seconds S [--payload-bytes 200]
//   stepsign-loadgen level1 --socket P --user U --password-file F --iterations K [--scrypt-n N --scrypt-r R --scrypt-p P]
//   stepsign-loadgen es256  --seconds S [--payload-bytes 300]  (in-process P256PrivateKey.signatureES256, one thread)
//   stepsign-loadgen hold   --socket P --connections N --seconds S     (opens N connections, one request each, holds them)
//   stepsign-loadgen attack --socket P --connections N --seconds S     (wrong logins for fresh unknown names, as fast as answered)
//
// `sign` speaks stepsign's line protocol (level-0 authenticateUserAndSignData); `agent` speaks
// the ssh-agent protocol (SSH_AGENTC_SIGN_REQUEST with the agent's first key). Each connection
// keeps at most W requests in flight (pipelining); a request's latency runs from the moment its
// bytes were handed to write() to the moment its whole reply was read. `sign` takes several
// sockets separated by commas (several daemons): connection i goes to socket i mod count, so the
// load is split evenly, and the reply counts per socket are printed as `completed_per_socket`.
#if canImport(Glibc)
import Glibc
#endif
internal import CLoadgenShims
import StepSignCrypto

// MARK: - Arguments

struct Options {
    var values: [String: String] = [:]
    init(_ arguments: ArraySlice<String>) {
        var iterator = arguments.makeIterator()
        while let key = iterator.next() {
            guard key.hasPrefix("--") else { fail("unexpected argument \(key)") }
            guard let value = iterator.next() else { fail("\(key) needs a value") }
            values[String(key.dropFirst(2))] = value
        }
    }
    func string(_ key: String, _ fallback: String? = nil) -> String {
        guard let value = values[key] ?? fallback else { fail("missing --\(key)") }
        return value
    }
    func int(_ key: String, _ fallback: Int? = nil) -> Int {
        guard let text = values[key] else {
            guard let fallback else { fail("missing --\(key)") }
            return fallback
        }
        guard let value = Int(text) else { fail("--\(key) must be an integer") }
        return value
    }
    func double(_ key: String, _ fallback: Double) -> Double {
        values[key].flatMap(Double.init) ?? fallback
    }
}

func fail(_ message: String) -> Never {
    printError("stepsign-loadgen: \(message)")
    exit(2)
}

// MARK: - Time and CPU

@inline(__always) func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

func cpuSeconds() -> (user: Double, system: Double) {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return (Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6,
            Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6)
}

func percentile(_ sorted: [UInt64], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let index = min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
    return Double(sorted[max(0, index)]) / 1e6
}

func fmt(_ value: Double, _ digits: Int = 3) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    return String(rounded)
}

// MARK: - Sockets

func connectUnix(_ path: String) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { fail("socket: \(String(cString: strerror(errno)))") }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { fail("socket path too long") }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (i, byte) in bytes.enumerated() { raw[i] = byte }
    }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard result == 0 else { fail("connect \(path): \(String(cString: strerror(errno)))") }
    return fd
}

func setNonBlocking(_ fd: Int32) {
    let flags = fcntl(fd, F_GETFL)
    _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
}

/// Blocking helpers for the simple modes.
func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
        let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if n < 0, errno == EINTR { continue }
        guard n > 0 else { fail("write: \(String(cString: strerror(errno)))") }
        offset += n
    }
}

final class LineReader {
    let fd: Int32
    var buffer: [UInt8] = []
    init(fd: Int32) { self.fd = fd }
    func line() -> [UInt8] {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { fail("the server closed the connection") }
            buffer.append(contentsOf: chunk[..<n])
        }
    }
}

func contains(_ haystack: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
    guard let base = haystack.baseAddress, let first = needle.first, haystack.count >= needle.count else { return false }
    return needle.withUnsafeBytes { needleBytes in
        var offset = 0
        let last = haystack.count - needle.count
        while offset <= last, let found = memchr(base + offset, Int32(first), last - offset + 1) {
            let at = base.distance(to: UnsafeRawPointer(found))
            if memcmp(base + at, needleBytes.baseAddress!, needle.count) == 0 { return true }
            offset = at + 1
        }
        return false
    }
}

func printError(_ text: String) {
    var bytes = Array(text.utf8)
    bytes.append(0x0A)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

// MARK: - Protocols

protocol WireProtocol {
    /// Appends request number `serial` to `out`.
    func request(_ serial: Int, into out: inout [UInt8])
    /// If `input[start...]` begins with a whole reply, its length and whether it succeeded.
    func reply(_ input: UnsafeRawBufferPointer) -> (length: Int, ok: Bool)?
}

func payload(_ serial: Int, bytes: Int) -> [UInt8] {
    // 200 printable bytes (no JSON escaping needed), distinct per request.
    var text = Array("bench payload #\(serial) ".utf8)
    while text.count < bytes { text.append(UInt8(ascii: "a") + UInt8(text.count % 26)) }
    return Array(text.prefix(bytes))
}

struct StepSignProtocol: WireProtocol {
    let user: String
    let payloadBytes: Int
    static let success = Array(#""status":{"code":100"#.utf8)
    static let accepted = Array(#""error":{"code":0,"#.utf8)

    func request(_ serial: Int, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"id":\#(serial),"op":"authenticateUserAndSignData","user":"\#(user)","payload":""#.utf8)
        out.append(contentsOf: payload(serial, bytes: payloadBytes))
        out.append(contentsOf: #"","reason":"Benchmark","authLevel":0,"authenticatorType":0}"#.utf8)
        out.append(0x0A)
    }

    func reply(_ input: UnsafeRawBufferPointer) -> (length: Int, ok: Bool)? {
        guard let base = input.baseAddress, input.count > 0,
              let newline = memchr(base, 0x0A, input.count) else { return nil }
        let length = base.distance(to: UnsafeRawPointer(newline)) + 1
        let line = UnsafeRawBufferPointer(rebasing: input[..<length])
        return (length, contains(line, Self.accepted) && contains(line, Self.success))
    }
}

func sshString(_ bytes: [UInt8], into out: inout [UInt8]) {
    sshUInt32(UInt32(bytes.count), into: &out)
    out.append(contentsOf: bytes)
}

func sshUInt32(_ value: UInt32, into out: inout [UInt8]) {
    out.append(contentsOf: [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)])
}

func readUInt32(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
    UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
}

/// The ssh-agent protocol (draft-miller-ssh-agent): SSH_AGENTC_SIGN_REQUEST (13), answered by
/// SSH_AGENT_SIGN_RESPONSE (14) or SSH_AGENT_FAILURE (5).
struct AgentProtocol: WireProtocol {
    let keyBlob: [UInt8]
    let payloadBytes: Int

    func request(_ serial: Int, into out: inout [UInt8]) {
        var body: [UInt8] = [13]
        sshString(keyBlob, into: &body)
        sshString(payload(serial, bytes: payloadBytes), into: &body)
        sshUInt32(0, into: &body)
        sshUInt32(UInt32(body.count), into: &out)
        out.append(contentsOf: body)
    }

    func reply(_ input: UnsafeRawBufferPointer) -> (length: Int, ok: Bool)? {
        guard input.count >= 5 else { return nil }
        let length = Int(readUInt32(input, 0)) + 4
        guard input.count >= length else { return nil }
        return (length, input[4] == 14)
    }

    /// Asks the agent for its identities (11 → 12) and returns the first key blob.
    static func firstKey(socket: String) -> [UInt8] {
        let fd = connectUnix(socket)
        defer { close(fd) }
        writeAll(fd, [0, 0, 0, 1, 11])
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { fail("ssh-agent closed the connection") }
            buffer.append(contentsOf: chunk[..<n])
            if buffer.count >= 4 {
                let length = buffer.withUnsafeBytes { Int(readUInt32($0, 0)) }
                if buffer.count >= length + 4 { break }
            }
        }
        return buffer.withUnsafeBytes { bytes -> [UInt8] in
            guard bytes[4] == 12, readUInt32(bytes, 5) >= 1 else { fail("ssh-agent holds no key") }
            let blobLength = Int(readUInt32(bytes, 9))
            return Array(bytes[13..<(13 + blobLength)])
        }
    }
}

// MARK: - The pipelined load

final class Connection {
    let fd: Int32
    var output: [UInt8] = []
    var written = 0
    var input: [UInt8] = []
    var consumed = 0
    /// Send times of the requests in flight, oldest first.
    var sentAt: [UInt64] = []
    var sentHead = 0
    var inFlight: Int { sentAt.count - sentHead }
    var closed = false
    /// Which of the sockets it is connected to.
    let socketIndex: Int

    init(fd: Int32, socketIndex: Int) {
        self.fd = fd
        self.socketIndex = socketIndex
        input.reserveCapacity(1 << 16)
    }
}

struct LoadResult {
    var completed = 0
    var failed = 0
    var seconds = 0.0
    var latencies: [UInt64] = []
    var completedPerSocket: [Int] = []
}

func runLoad(socketPaths: [String], connections count: Int, window: Int, requests: Int, seconds: Double,
             proto: some WireProtocol) -> LoadResult {
    let connections = (0..<count).map { index in
        Connection(fd: connectUnix(socketPaths[index % socketPaths.count]), socketIndex: index % socketPaths.count)
    }
    for connection in connections { setNonBlocking(connection.fd) }
    // epoll, not poll(): one wait costs what is ready, not what is open, so the generator's
    // own CPU stays small next to the server's on a machine they share.
    let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
    guard epoll >= 0 else { fail("epoll_create1: \(String(cString: strerror(errno)))") }
    defer { Glibc.close(epoll) }
    func watch(_ index: Int, writable: Bool, operation: Int32) {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | (writable ? EPOLLOUT.rawValue : 0)
        event.data.u64 = UInt64(index)
        guard epoll_ctl(epoll, operation, connections[index].fd, &event) == 0 else {
            fail("epoll_ctl: \(String(cString: strerror(errno)))")
        }
    }
    for index in connections.indices { watch(index, writable: false, operation: EPOLL_CTL_ADD) }
    var waitingToWrite = [Bool](repeating: false, count: count)

    var result = LoadResult()
    result.completedPerSocket = [Int](repeating: 0, count: socketPaths.count)
    result.latencies.reserveCapacity(min(requests, 4_000_000))
    var sent = 0
    var serial = 0
    var outstanding = 0
    let start = monotonicNanoseconds()
    let deadline = start + UInt64(seconds * 1e9)
    let drainDeadline = deadline + 10_000_000_000
    var events = [epoll_event](repeating: epoll_event(), count: max(count, 1))
    var chunk = [UInt8](repeating: 0, count: 1 << 16)

    func fill(_ index: Int, now: UInt64) {
        let connection = connections[index]
        guard !connection.closed else { return }
        var added = false
        while connection.inFlight < window, sent < requests, now < deadline {
            serial += 1
            sent += 1
            outstanding += 1
            proto.request(serial, into: &connection.output)
            connection.sentAt.append(0)
            added = true
        }
        if added { flush(index) }
    }

    func flush(_ index: Int) {
        let connection = connections[index]
        // Requests appended since the last write get their send time now, as they go out.
        let now = monotonicNanoseconds()
        for slot in connection.sentHead..<connection.sentAt.count where connection.sentAt[slot] == 0 {
            connection.sentAt[slot] = now
        }
        while connection.written < connection.output.count {
            let n = connection.output[connection.written...].withUnsafeBytes { write(connection.fd, $0.baseAddress, $0.count) }
            if n > 0 { connection.written += n; continue }
            if n < 0, errno == EINTR { continue }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK { break }
            close(index)
            return
        }
        let pending = connection.written < connection.output.count
        if pending != waitingToWrite[index] {
            waitingToWrite[index] = pending
            watch(index, writable: pending, operation: EPOLL_CTL_MOD)
        }
        if !pending {
            connection.output.removeAll(keepingCapacity: true)
            connection.written = 0
        }
    }

    func close(_ index: Int) {
        let connection = connections[index]
        guard !connection.closed else { return }
        connection.closed = true
        result.failed += connection.inFlight
        outstanding -= connection.inFlight
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, connection.fd, nil)
    }

    func receive(_ index: Int) {
        let connection = connections[index]
        let n = chunk.withUnsafeMutableBytes { read(connection.fd, $0.baseAddress, $0.count) }
        if n <= 0 {
            if n < 0, errno == EAGAIN || errno == EINTR { return }
            close(index)
            return
        }
        connection.input.append(contentsOf: chunk[..<n])
        let received = monotonicNanoseconds()
        connection.input.withUnsafeBytes { all in
            while let reply = proto.reply(UnsafeRawBufferPointer(rebasing: all[connection.consumed...])) {
                connection.consumed += reply.length
                guard connection.inFlight > 0 else { break }
                let sentAt = connection.sentAt[connection.sentHead]
                connection.sentHead += 1
                outstanding -= 1
                if reply.ok {
                    result.completed += 1
                    result.completedPerSocket[connection.socketIndex] += 1
                    result.latencies.append(received - sentAt)
                } else {
                    result.failed += 1
                }
            }
        }
        if connection.consumed == connection.input.count {
            connection.input.removeAll(keepingCapacity: true)
            connection.consumed = 0
        } else if connection.consumed > 1 << 15 {
            connection.input.removeSubrange(..<connection.consumed)
            connection.consumed = 0
        }
        if connection.sentHead > 4096, connection.sentHead == connection.sentAt.count {
            connection.sentAt.removeAll(keepingCapacity: true)
            connection.sentHead = 0
        }
        fill(index, now: received)
    }

    for index in connections.indices { fill(index, now: start) }
    while true {
        let now = monotonicNanoseconds()
        if outstanding == 0, sent >= requests || now >= deadline { break }
        if now >= drainDeadline { printError("stepsign-loadgen: \(outstanding) replies never came"); break }
        let ready = epoll_wait(epoll, &events, Int32(events.count), 100)
        if ready <= 0 {
            // Past the deadline with nothing in flight on a connection: nothing more to send.
            continue
        }
        for event in events[..<Int(ready)] {
            let index = Int(event.data.u64)
            if event.events & EPOLLOUT.rawValue != 0 { flush(index) }
            if event.events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 { receive(index) }
        }
    }
    result.seconds = Double(monotonicNanoseconds() - start) / 1e9
    for connection in connections { Glibc.close(connection.fd) }
    return result
}

func report(_ fields: [(String, String)], cpuStart: (user: Double, system: Double), wallStart: UInt64) {
    let cpu = cpuSeconds()
    let wall = Double(monotonicNanoseconds() - wallStart) / 1e9
    let user = cpu.user - cpuStart.user
    let system = cpu.system - cpuStart.system
    var all = fields
    all.append(("client_cpu_user_s", fmt(user)))
    all.append(("client_cpu_sys_s", fmt(system)))
    all.append(("client_cpu_pct", fmt((user + system) / max(wall, 1e-9) * 100, 1)))
    print(all.map { "\($0.0)=\($0.1)" }.joined(separator: " "))
}

func loadFields(_ result: LoadResult, connections: Int, window: Int) -> [(String, String)] {
    let sorted = result.latencies.sorted()
    let perSocket: [(String, String)] = result.completedPerSocket.count > 1
        ? [("completed_per_socket", result.completedPerSocket.map(String.init).joined(separator: ","))] : []
    return perSocket + [
        ("connections", "\(connections)"), ("window", "\(window)"),
        ("completed", "\(result.completed)"), ("failed", "\(result.failed)"),
        ("seconds", fmt(result.seconds)),
        ("throughput", fmt(Double(result.completed) / max(result.seconds, 1e-9), 1)),
        ("p50_ms", fmt(percentile(sorted, 0.50))), ("p99_ms", fmt(percentile(sorted, 0.99))),
        ("max_ms", fmt(percentile(sorted, 1.0))),
        ("p10_ms", fmt(percentile(sorted, 0.10))), ("p90_ms", fmt(percentile(sorted, 0.90))),
        ("p95_ms", fmt(percentile(sorted, 0.95))), ("p999_ms", fmt(percentile(sorted, 0.999))),
    ]
}

// MARK: - Bare scrypt

/// The bare cost of one password check: `PasswordHash.verify` in this process, which is what
/// the daemon runs for a `setPassword` answer.
struct BareScrypt {
    private static let password = "Bench-Password-123"
    private let encoded: String

    init(parameters: ScryptParameters) throws {
        encoded = try PasswordHash.make(password: Self.password, parameters: parameters)
    }

    /// One verification's wall time in nanoseconds.
    func timedVerify() -> UInt64 {
        let start = monotonicNanoseconds()
        guard (try? PasswordHash.verify(password: Self.password, encoded: encoded)) == true else { fail("scrypt mismatch") }
        return monotonicNanoseconds() - start
    }
}

// MARK: - Modes

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { fail("usage: stepsign-loadgen sign|agent|level1|es256|hold --option value ...") }
let options = Options(arguments.dropFirst(2))
let cpuStart = cpuSeconds()
let wallStart = monotonicNanoseconds()
signal(SIGPIPE, SIG_IGN)

switch arguments[1] {
case "sign", "agent":
    let socketPaths = options.string("socket").split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    guard !socketPaths.contains(where: \.isEmpty) else { fail("--socket: an empty path") }
    guard arguments[1] == "sign" || socketPaths.count == 1 else { fail("agent takes one --socket") }
    let connections = options.int("connections")
    let window = options.int("window", 1)
    let requests = options.int("requests", 1_000_000)
    let seconds = options.double("seconds", 5)
    let payloadBytes = options.int("payload-bytes", 200)
    let result: LoadResult
    if arguments[1] == "sign" {
        let proto = StepSignProtocol(user: options.string("user", "bench"), payloadBytes: payloadBytes)
        result = runLoad(socketPaths: socketPaths, connections: connections, window: window, requests: requests,
                         seconds: seconds, proto: proto)
    } else {
        let proto = AgentProtocol(keyBlob: AgentProtocol.firstKey(socket: socketPaths[0]), payloadBytes: payloadBytes)
        result = runLoad(socketPaths: socketPaths, connections: connections, window: window, requests: requests,
                         seconds: seconds, proto: proto)
    }
    report([("mode", arguments[1])] + loadFields(result, connections: connections, window: window),
           cpuStart: cpuStart, wallStart: wallStart)

case "level1":
    // Full level-1 round trips on one connection: authenticateUserAndSignData (→ getPassword),
    // then setPassword (scrypt check, counter reset, signature, durable ledger row).
    // With --scrypt-n, each round trip is preceded by one bare PasswordHash.verify at those
    // parameters in this process (what the daemon runs for the setPassword answer), so the
    // two are measured alternately and the host's changing speed falls on both.
    let bareScrypt = try options.values["scrypt-n"].map { _ in
        try BareScrypt(parameters: ScryptParameters(n: UInt64(options.int("scrypt-n")), r: UInt32(options.int("scrypt-r", 8)),
                                                    p: UInt32(options.int("scrypt-p", 1))))
    }
    var scryptLatencies: [UInt64] = []
    let fd = connectUnix(options.string("socket"))
    let reader = LineReader(fd: fd)
    let user = options.string("user")
    let passwordFile = options.string("password-file")
    guard let file = fopen(passwordFile, "r") else { fail("cannot read \(passwordFile)") }
    var line = [CChar](repeating: 0, count: 256)
    _ = fgets(&line, Int32(line.count), file)
    fclose(file)
    let password = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        .split(separator: "\n").first.map(String.init) ?? ""
    let iterations = options.int("iterations", 20)
    let deadline = monotonicNanoseconds() + UInt64(options.double("seconds", 120) * 1e9)
    var latencies: [UInt64] = []
    var failures = 0
    for i in 0..<iterations where monotonicNanoseconds() < deadline {
        if let bareScrypt { scryptLatencies.append(bareScrypt.timedVerify()) }
        let start = monotonicNanoseconds()
        var request: [UInt8] = Array(#"{"id":\#(2 * i + 1),"op":"authenticateUserAndSignData","user":"\#(user)","payload":""#.utf8)
        request += payload(i, bytes: options.int("payload-bytes", 200))
        request += Array(#"","reason":"Benchmark","authLevel":1,"authenticatorType":0}"#.utf8) + [0x0A]
        writeAll(fd, request)
        let challenge = String(decoding: reader.line(), as: UTF8.self)
        guard challenge.contains(#""event":"getPassword""#) else { fail("no password challenge: \(challenge)") }
        writeAll(fd, Array(#"{"id":\#(2 * i + 2),"op":"setPassword","password":"\#(password)","challengeMode":12}"#.utf8) + [0x0A])
        let answer = String(decoding: reader.line(), as: UTF8.self)
        if answer.contains(#""event":"onAuthenticateUserAndSignData""#), answer.contains(#""status":{"code":100"#) {
            latencies.append(monotonicNanoseconds() - start)
        } else {
            failures += 1
            printError("stepsign-loadgen: level-1 signing failed: \(answer.prefix(300))")
        }
    }
    close(fd)
    let sorted = latencies.sorted()
    let mean = sorted.isEmpty ? 0 : Double(sorted.reduce(0, +)) / Double(sorted.count) / 1e6
    let scryptSorted = scryptLatencies.sorted()
    let scryptMean = scryptSorted.isEmpty ? 0 : Double(scryptSorted.reduce(0, +)) / Double(scryptSorted.count) / 1e6
    report([("mode", "level1"), ("completed", "\(sorted.count)"), ("failed", "\(failures)"),
            ("mean_ms", fmt(mean)), ("p50_ms", fmt(percentile(sorted, 0.5))), ("min_ms", fmt(percentile(sorted, 0))),
            ("scrypt_completed", "\(scryptSorted.count)"), ("scrypt_mean_ms", fmt(scryptMean)),
            ("scrypt_p50_ms", fmt(percentile(scryptSorted, 0.5)))],
           cpuStart: cpuStart, wallStart: wallStart)

case "es256":
    // The bare cost of one ES256 signature in this process, through StepSignCrypto (SHA-256
    // then EVP_PKEY_sign), on one thread: what the daemon pays per signature before any
    // protocol, engine or ledger work. Compare with `openssl speed ecdsap256`.
    let key = try P256PrivateKey.generate()
    let message = payload(0, bytes: options.int("payload-bytes", 300))
    let deadline = monotonicNanoseconds() + UInt64(options.double("seconds", 3) * 1e9)
    var count = 0
    while monotonicNanoseconds() < deadline {
        for _ in 0..<100 { _ = try key.signatureES256(for: message) }
        count += 100
    }
    let elapsed = Double(monotonicNanoseconds() - wallStart) / 1e9
    report([("mode", "es256"), ("completed", "\(count)"), ("sign_per_s", fmt(Double(count) / elapsed, 1))],
           cpuStart: cpuStart, wallStart: wallStart)

case "hold":
    // Opens N connections, sends one level-0 signing on each and reads its reply (so every
    // session is live), prints "ready", then holds them for --seconds or until stdin closes.
    let socketPath = options.string("socket")
    let count = options.int("connections")
    let proto = StepSignProtocol(user: options.string("user", "bench"), payloadBytes: options.int("payload-bytes", 200))
    var fds: [Int32] = []
    var ok = 0
    for i in 0..<count {
        let fd = connectUnix(socketPath)
        var request: [UInt8] = []
        proto.request(i + 1, into: &request)
        writeAll(fd, request)
        fds.append(fd)
    }
    for fd in fds {
        let reply = LineReader(fd: fd).line()
        if reply.withUnsafeBytes({ contains($0, StepSignProtocol.success) }) { ok += 1 }
    }
    report([("mode", "hold"), ("connections", "\(count)"), ("ok", "\(ok)")], cpuStart: cpuStart, wallStart: wallStart)
    fflush(nil)
    var pollStdin = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0)]
    _ = poll(&pollStdin, 1, Int32(options.double("seconds", 30) * 1000))
    for fd in fds { close(fd) }

case "attack":
    // The starvation attack of SPEC §7: N connections, each logging in as a fresh name that is
    // not a user (no login needed, no block reached) with a wrong password, again and again,
    // each answer sent as soon as the last reply came. Every answer the daemon admits costs it
    // one scrypt check. Counts the replies: checked (102/153), refused busy (error 14), other.
    let socketPath = options.string("socket")
    let count = options.int("connections")
    let deadline = monotonicNanoseconds() + UInt64(options.double("seconds", 10) * 1e9)
    let tag = getpid()
    var fds: [Int32] = []
    var readers: [LineReader] = []
    var serials = [Int](repeating: 0, count: count)
    var names = [Int](repeating: 0, count: count)
    var checked = 0, busy = 0, other = 0
    /// A new name's login (`setUser`), or another answer to the open one (`setPassword`).
    func send(_ index: Int, newName: Bool) {
        serials[index] += 1
        let line: String
        if newName {
            names[index] += 1
            line = #"{"id":\#(serials[index]),"op":"setUser","user":"attacker-\#(tag)-\#(index)-\#(names[index])"}"#
        } else {
            line = #"{"id":\#(serials[index]),"op":"setPassword","password":"Wrong-Guess-71","challengeMode":0}"#
        }
        writeAll(fds[index], Array(line.utf8) + [0x0A])
    }
    var answering = [Bool](repeating: false, count: count)
    for index in 0..<count {
        let fd = connectUnix(socketPath)
        fds.append(fd)
        readers.append(LineReader(fd: fd))
        send(index, newName: true)
    }
    var polls = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    while monotonicNanoseconds() < deadline {
        guard poll(&polls, nfds_t(polls.count), 100) > 0 else { continue }
        for index in 0..<count where polls[index].revents != 0 {
            let reply = String(decoding: readers[index].line(), as: UTF8.self)
            if answering[index] {
                if reply.contains(#""error":{"code":14"#) { busy += 1 }
                else if reply.contains(#""code":102"#) || reply.contains(#""code":153"#) { checked += 1 }
                else { other += 1 }
            }
            // After the name is blocked (153, then getUser) a fresh name; else answer again.
            let fresh = answering[index] && (reply.contains(#""event":"getUser""#) || reply.contains(#""error":{"code":148"#))
            answering[index] = !fresh
            send(index, newName: fresh)
        }
    }
    for fd in fds { close(fd) }
    report([("mode", "attack"), ("connections", "\(count)"), ("checked", "\(checked)"), ("busy", "\(busy)"),
            ("other", "\(other)")], cpuStart: cpuStart, wallStart: wallStart)

default:
    fail("unknown mode \(arguments[1])")
}
