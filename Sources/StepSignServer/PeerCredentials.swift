#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import StepSignEngine

/// Who is on the other end of a Unix socket: `SO_PEERCRED`, then `/proc/PID` for the name and
/// supplementary groups.
enum PeerCredentials {
    /// Reads the peer of `channel`; the future fails if the kernel does not tell.
    static func read(_ channel: Channel) -> EventLoopFuture<Peer> {
        guard let provider = channel as? SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(ChannelError.operationUnsupported)
        }
        let credentials: EventLoopFuture<UCred> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED)
        )
        return credentials.map { cred in
            Peer(uid: cred.uid, gid: cred.gid, pid: cred.pid, comm: comm(pid: cred.pid), groups: groups(pid: cred.pid))
        }
    }

    /// Linux's `struct ucred` (pid_t, uid_t, gid_t), which Swift's Glibc module does not
    /// export without `_GNU_SOURCE`; the layout is fixed by the kernel ABI.
    struct UCred: Sendable {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
    }

    /// `/proc/PID/comm` without its newline, or "".
    static func comm(pid: Int32) -> String {
        guard let text = readSmallFile("/proc/\(pid)/comm") else { return "" }
        return String(text.prefix { $0 != "\n" })
    }

    /// The `Groups:` line of `/proc/PID/status`.
    static func groups(pid: Int32) -> [UInt32] {
        guard let text = readSmallFile("/proc/\(pid)/status") else { return [] }
        for line in text.split(separator: "\n") where line.hasPrefix("Groups:") {
            return line.dropFirst("Groups:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { UInt32($0) }
        }
        return []
    }

    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }
}
