#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StepSignClient

/// A bare Unix-socket client for hostile-input tests: raw bytes out, raw lines back, half-close,
/// and an honest answer to "did the daemon close?" (StepSignConnection hides those on purpose).
final class RawClient {
    let fd: Int32
    private var buffer: [UInt8] = []

    /// What the next read saw.
    enum Next: Equatable {
        case line([UInt8])
        case closed
        case timedOut
    }

    init(socketPath path: String) throws {
        fd = try StepSignConnection.connectedSocket(path: path)
    }

    deinit { close(fd) }

    /// Writes all of `bytes`; throws if the daemon closed the connection meanwhile.
    func send(_ bytes: [UInt8]) throws {
        try StepSignConnection.send(bytes, on: fd)
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Shuts down the writing side (the daemon sees end of input).
    func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// The next reply line, or whether the daemon closed or said nothing within `timeout` seconds.
    func next(timeout: Double = 20) -> Next {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return .line(line)
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return .timedOut }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(remaining * 1000) + 1)
            if ready < 0, errno == EINTR { continue }
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return .closed }  // EOF, or ECONNRESET: the daemon closed
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// The next reply, decoded; throws if there is none.
    func reply(timeout: Double = 20) throws -> ClientReply {
        switch next(timeout: timeout) {
        case let .line(line): return try ClientReply(line: line)
        case .closed: throw ClientError.closed
        case .timedOut: throw ClientError.timedOut
        }
    }

    /// Sends one request object and returns its reply.
    func call(_ json: String, timeout: Double = 20) throws -> ClientReply {
        try send(json + "\n")
        return try reply(timeout: timeout)
    }
}

/// Raises this process's open-file limit (the daemon started afterwards inherits it) to `wanted`
/// or the hard limit, whichever is lower; returns the soft limit now in force.
@discardableResult
func raiseOpenFileLimit(to wanted: rlim_t) -> rlim_t {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    if limit.rlim_cur < wanted {
        // Root may raise the hard limit too; anyone may raise the soft one up to it.
        if limit.rlim_max < wanted {
            var raised = rlimit(rlim_cur: wanted, rlim_max: wanted)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return wanted }
        }
        limit.rlim_cur = min(wanted, limit.rlim_max)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
    return limit.rlim_cur
}
