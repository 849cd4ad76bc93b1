import Foundation

/// The receiving end of `sd_notify(3)`, as systemd binds it: an `AF_UNIX` `SOCK_DGRAM` socket
/// at a path, or (name starting with `@`) in the abstract namespace. `name` is what goes into
/// the daemon's `NOTIFY_SOCKET`.
final class NotifySocket: @unchecked Sendable {
    let name: String
    private let fd: Int32

    /// A socket at `path`.
    convenience init(path: String) throws {
        try self.init(name: path)
    }

    /// A socket with a fresh abstract name (`@stepsign-test-…`).
    convenience init(abstract: ()) throws {
        try self.init(name: "@stepsign-test-\(UUID().uuidString.prefix(12))")
    }

    private init(name: String) throws {
        self.name = name
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw NotifySocketError(call: "socket", code: errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(name.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw NotifySocketError(call: "bind \(name)", code: code)
        }
    }

    /// The next datagram, or nil if none arrives within `timeout` seconds.
    func receive(timeout: TimeInterval) -> String? {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Int32(timeout * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// Datagrams until one has the line `line` (that one included); nil if `timeout` seconds
    /// pass first.
    func receive(until line: String, timeout: TimeInterval) -> [String]? {
        let deadline = Date().addingTimeInterval(timeout)
        var messages: [String] = []
        while Date() < deadline {
            guard let message = receive(timeout: deadline.timeIntervalSinceNow) else { return nil }
            messages.append(message)
            if Self.lines(message).contains(line) { return messages }
        }
        return nil
    }

    /// The `KEY=VALUE` lines of a message.
    static func lines(_ message: String) -> [String] {
        message.split(separator: "\n").map(String.init)
    }

    deinit {
        close(fd)
        if !name.hasPrefix("@") { unlink(name) }
    }
}

struct NotifySocketError: Error, CustomStringConvertible {
    var call: String
    var code: Int32
    var description: String { "\(call): \(String(cString: strerror(code)))" }
}
