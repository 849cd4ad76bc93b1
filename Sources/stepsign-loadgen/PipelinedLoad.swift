#if canImport(Glibc)
import Glibc
#endif
internal import CLoadgenShims
import StepSignSystem

/// One connection of the pipelined load, with its requests in flight.
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

/// What a pipelined run measured: replies counted, per-request latencies in nanoseconds.
struct LoadResult {
    var completed = 0
    var failed = 0
    var seconds = 0.0
    var latencies: [UInt64] = []
    var completedPerSocket: [Int] = []
}

/// Keeps at most `window` requests in flight on each of `count` connections (connection i to
/// socket i mod the number of sockets) for `seconds` or `requests`, on one thread with epoll;
/// a request's latency runs from the moment its bytes were handed to write() to the moment its
/// whole reply was read.
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
            let n = retryingOnEINTR { connection.output[connection.written...].withUnsafeBytes { write(connection.fd, $0.baseAddress, $0.count) } }
            if n > 0 { connection.written += n; continue }
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
        let n = retryingOnEINTR { chunk.withUnsafeMutableBytes { read(connection.fd, $0.baseAddress, $0.count) } }
        if n <= 0 {
            if n < 0, errno == EAGAIN { return }
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

/// The result line's fields of a pipelined run.
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
