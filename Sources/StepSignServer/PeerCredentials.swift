#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import StepSignEngine

/// Who is on the other end of a Unix socket: `SO_PEERCRED` (pid, uid, gid) and
/// `SO_PEERGROUPS` (supplementary groups), both as the kernel recorded them when the peer
/// connected, then `/proc/PID/comm` for the name.
///
/// The groups come from the socket, not from `/proc/PID/status` after accept: by then the
/// peer may have dropped or changed its groups, or exited and lent its PID to another process.
enum PeerCredentials {
    /// Reads the peer of `channel`; the future fails if the kernel does not tell its uid.
    static func read(_ channel: Channel) -> EventLoopFuture<Peer> {
        guard let provider = channel as? SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(ChannelError.operationUnsupported)
        }
        let credentials: EventLoopFuture<UCred> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED)
        )
        return credentials.flatMap { cred in
            groups(provider).map { groups in
                Peer(uid: cred.uid, gid: cred.gid, pid: cred.pid, comm: comm(pid: cred.pid), groups: groups)
            }
        }
    }

    /// Linux's `struct ucred` (pid_t, uid_t, gid_t), which Swift's Glibc module does not
    /// export without `_GNU_SOURCE`; the layout is fixed by the kernel ABI.
    struct UCred: Sendable {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
    }

    /// `SO_PEERGROUPS` (Linux 4.13): the peer's supplementary groups at connect time.
    static let peerGroupsOption: Int32 = 59

    /// A zero-length buffer: `SO_PEERGROUPS` fills it (with nothing) only when the peer has no
    /// supplementary groups, and fails with `ERANGE` otherwise.
    private struct NoGroups {}

    /// Room for 1024 groups. `unsafeGetSocketOption` zeroes its buffer and does not return the
    /// length the kernel wrote, so the list is read up to its zero padding (the kernel keeps
    /// group lists sorted: `groups_sort`).
    private struct GroupBuffer {
        var words: (SIMD64<UInt32>, SIMD64<UInt32>, SIMD64<UInt32>, SIMD64<UInt32>,
                    SIMD64<UInt32>, SIMD64<UInt32>, SIMD64<UInt32>, SIMD64<UInt32>,
                    SIMD64<UInt32>, SIMD64<UInt32>, SIMD64<UInt32>, SIMD64<UInt32>,
                    SIMD64<UInt32>, SIMD64<UInt32>, SIMD64<UInt32>, SIMD64<UInt32>)

        var values: [UInt32] {
            withUnsafeBytes(of: words) { Array($0.bindMemory(to: UInt32.self)) }
        }
    }

    /// The peer's supplementary groups from `SO_PEERGROUPS`; none (only the primary group
    /// then counts) if the kernel does not tell or the peer has more than 1024.
    private static func groups(_ provider: SocketOptionProvider) -> EventLoopFuture<[UInt32]> {
        let level = SocketOptionLevel(SOL_SOCKET)
        let name = SocketOptionName(peerGroupsOption)
        let probe: EventLoopFuture<NoGroups> = provider.unsafeGetSocketOption(level: level, name: name)
        return probe.map { _ in [UInt32]() }.flatMapError { _ in
            let list: EventLoopFuture<GroupBuffer> = provider.unsafeGetSocketOption(level: level, name: name)
            return list.map { supplementaryGroups(hasAny: true, zeroPadded: $0.values) }.recover { _ in [] }
        }
    }

    /// The groups in `zeroPadded`, the kernel's ascending list followed by zeros: the values
    /// up to the first one smaller than its predecessor, without repeats. `hasAny` tells an
    /// empty list from the list `[0]`.
    static func supplementaryGroups(hasAny: Bool, zeroPadded: [UInt32]) -> [UInt32] {
        guard hasAny, let first = zeroPadded.first else { return [] }
        var groups = [first]
        for value in zeroPadded.dropFirst() {
            guard value >= groups[groups.count - 1] else { break }
            if value != groups[groups.count - 1] { groups.append(value) }
        }
        return groups
    }

    /// `/proc/PID/comm` without its newline, or "".
    static func comm(pid: Int32) -> String {
        guard let text = readSmallFile("/proc/\(pid)/comm") else { return "" }
        return String(text.prefix { $0 != "\n" })
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
