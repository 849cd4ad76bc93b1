#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StepSignProtocol
import StepSignSystem

/// A blocking connection to `stepsignd`: one request out, one reply line back (SPEC §3).
///
/// For the CLI and for tests; it is deliberately simple (no event loop). Not thread-safe.
public final class StepSignConnection {
    /// The default socket (SPEC §8).
    public static let defaultSocketPath = "/run/stepsign/stepsignd.sock"

    private let fd: Int32
    private var buffer: [UInt8] = []
    private var nextID = 1

    /// Connects to the daemon's socket at `path`.
    public init(socketPath path: String) throws {
        // Connect first: once `fd` is assigned this object owns it, and `deinit` closes it.
        fd = try Self.connectedSocket(path: path)
    }

    /// Takes over `descriptor`, a stream socket connected to the daemon (from
    /// ``connectedSocket(path:)``, or handed over by a parent process); closes it when done.
    public init(adopting descriptor: Int32) {
        fd = descriptor
    }

    /// A stream socket connected to `path`, for callers that need the raw descriptor (tests
    /// of hostile clients); the caller owns it and must close it.
    public static func connectedSocket(path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ClientError.system("socket", errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            close(fd)
            throw ClientError.pathTooLong(path)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw ClientError.system("connect \(path)", code)
        }
        return fd
    }

    deinit {
        close(fd)
    }

    /// Sends `op` with `parameters` and waits for its reply.
    ///
    /// The line is `{"id":N,"op":…}` and then the parameters in the order given, written by the
    /// protocol's ``JSONWriter``. Values are anything with one JSON form (``JSONValueConvertible``:
    /// strings, numbers, booleans, arrays, `JSONValue`), so a call reads
    /// `call("setUser", ["user": name])`.
    public func call(_ op: String, _ parameters: KeyValuePairs<String, any JSONValueConvertible> = [:],
                     timeout: Double = 60) throws -> ClientReply {
        try call(op, parameters.map { ($0.key, $0.value.jsonValue) }, timeout: timeout)
    }

    /// Sends `op` with `parameters` (in order) and waits for its reply.
    public func call(_ op: String, _ parameters: [(String, JSONValue)], timeout: Double = 60) throws -> ClientReply {
        let id = nextID
        nextID += 1
        var line = JSONValue.object([("id", .int(Int64(id))), ("op", .string(op))] + parameters).jsonBytes
        line.append(0x0A)
        do {
            try send(line)
        } catch let error as ClientError {
            // A refused peer (error 13) or one connection too many (14) is sent one line and
            // closed, possibly before the request went out: that line is the answer to report.
            guard let waiting = waitingReply() else { throw error }
            return waiting
        }
        return try ClientReply(line: readLine(timeout: timeout))
    }

    /// The reply line the daemon wrote before it closed the connection, if any: read after a
    /// send failed with EPIPE or ECONNRESET (the daemon's closing line is still queued).
    private func waitingReply() -> ClientReply? {
        guard let line = try? readLine(timeout: 1) else { return nil }
        return try? ClientReply(line: line)
    }

    /// Writes raw bytes (for tests of framing and bad input).
    public func send(_ bytes: [UInt8]) throws {
        try Self.send(bytes, on: fd)
    }

    /// Writes all of `bytes` to the connected socket `fd` (from `connectedSocket(path:)`),
    /// without SIGPIPE; throws if the daemon closed the connection meanwhile.
    public static func send(_ bytes: [UInt8], on fd: Int32) throws {
        var offset = 0
        while offset < bytes.count {
            let written = retryingOnEINTR { bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
            if written < 0 {
                throw ClientError.system("send", errno)
            }
            offset += written
        }
    }

    /// Reads one reply line, without its newline.
    public func readLine(timeout: Double = 60) throws -> [UInt8] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw ClientError.timedOut }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = retryingOnEINTR { poll(&poller, 1, Int32(min(remaining * 1000, 60_000)) + 1) }
            if ready < 0 {
                throw ClientError.system("poll", errno)
            }
            if ready == 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = retryingOnEINTR { chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) } }
            if count < 0 {
                throw ClientError.system("recv", errno)
            }
            if count == 0 { throw ClientError.closed }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }
}
