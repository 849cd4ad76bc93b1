import Foundation
import NIOCore
import NIOPosix
@testable import StepSignServer
import StepSignTestSupport
import Testing

/// The socket file the daemon binds by path (SPEC §3): its group and mode are set without
/// following a link, so a local user who swaps the fresh socket for a symbolic link (in a
/// directory others may write) cannot have the daemon change a file of their choice.
@Suite("Socket file ownership", .serialized)
struct SocketFileOwnershipTests {
    /// A group the caller may give its files other than its own: any group for root (65534,
    /// nogroup), else one of its supplementary groups; nil if it has none.
    static let otherGroup: gid_t? = {
        if geteuid() == 0 { return 65534 }
        var groups = [gid_t](repeating: 0, count: Int(getgroups(0, nil)))
        let count = getgroups(Int32(groups.count), &groups)
        return groups.prefix(max(0, Int(count))).first { $0 != getegid() }
    }()

    private func status(_ path: String) throws -> stat {
        var info = stat()
        try #require(lstat(path, &info) == 0, "lstat \(path): errno \(errno)")
        return info
    }

    /// A socket bound at `path` by NIO with the process's umask as it is; closed by the caller.
    private func bindSocket(at path: String) async throws -> Channel {
        try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { $0.eventLoop.makeSucceededVoidFuture() }
            .bind(unixDomainSocketPath: path).get()
    }

    @Test("a symbolic link at the socket path is refused; the file it points at keeps its mode and group")
    func symlinkRefused() throws {
        let directory = try TemporaryDirectory("socket-swap")
        defer { directory.remove() }
        let victim = directory.appending("victim")
        try "secret\n".write(toFile: victim, atomically: false, encoding: .utf8)
        try #require(chmod(victim, 0o600) == 0)
        let before = try status(victim)
        let path = directory.appending("s.sock")
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: victim)

        let error = #expect(throws: ServerError.self) {
            try SocketFileOwnership.secure(path: path, mode: 0o666, group: Self.otherGroup)
        }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains(path) && text.contains("not a socket"), "\(text)")
        let after = try status(victim)
        #expect(after.st_mode & 0o7777 == 0o600, "the victim's mode changed to \(String(after.st_mode & 0o7777, radix: 8))")
        #expect(after.st_gid == before.st_gid, "the victim's group changed to \(after.st_gid)")
        #expect(after.st_uid == before.st_uid)
    }

    @Test("a regular file at the socket path is refused and left alone")
    func regularFileRefused() throws {
        let directory = try TemporaryDirectory("socket-regular")
        defer { directory.remove() }
        let path = directory.appending("s.sock")
        try "".write(toFile: path, atomically: false, encoding: .utf8)
        try #require(chmod(path, 0o600) == 0)
        let before = try status(path)
        let error = #expect(throws: ServerError.self) {
            try SocketFileOwnership.secure(path: path, mode: 0o660, group: Self.otherGroup)
        }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains(path) && text.contains("not a socket"), "\(text)")
        let after = try status(path)
        #expect(after.st_mode & 0o7777 == 0o600)
        #expect(after.st_gid == before.st_gid)
    }

    @Test("a socket bound with the creation mask gets the configured mode, and secure() gives it the group",
          .enabled(if: otherGroup != nil, "needs a second group"))
    func boundSocketGetsGroup() async throws {
        let directory = try TemporaryDirectory("socket-group")
        defer { directory.remove() }
        let path = directory.appending("s.sock")
        // 0770: the umask it needs (007) keeps the owner's bits, so files other tests in this
        // process create meanwhile stay usable.
        let server = try await SocketFileOwnership.binding(mode: 0o770) { try await bindSocket(at: path) }
        defer { server.close(promise: nil) }
        #expect(try status(path).st_mode & 0o7777 == 0o770)
        let group = try #require(Self.otherGroup)
        try SocketFileOwnership.secure(path: path, mode: 0o770, group: group)
        let info = try status(path)
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
        #expect(info.st_gid == group)
        #expect(info.st_mode & 0o7777 == 0o770)
    }

    @Test("the creation mask is the complement of the mode, and the umask is restored after the bind")
    func creationMaskRestored() async throws {
        #expect(SocketFileOwnership.creationMask(for: 0o660) == 0o117)
        #expect(SocketFileOwnership.creationMask(for: 0o600) == 0o177)
        #expect(SocketFileOwnership.creationMask(for: 0o666) == 0o111)
        let saved = umask(0o022)
        defer { umask(saved) }
        await SocketFileOwnership.binding(mode: 0o770) { #expect(currentUmask() == 0o007) }
        #expect(currentUmask() == 0o022)
    }

    @Test("a socket whose mode is not the configured one is refused (the mode is checked, not set)")
    func wrongModeRefused() async throws {
        let directory = try TemporaryDirectory("socket-mode")
        defer { directory.remove() }
        let path = directory.appending("s.sock")
        let server = try await bindSocket(at: path)
        defer { server.close(promise: nil) }
        try #require(chmod(path, 0o755) == 0)
        let error = #expect(throws: ServerError.self) {
            try SocketFileOwnership.secure(path: path, mode: 0o660, group: nil)
        }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains(path) && text.contains("mode 0755") && text.contains("0660"), "\(text)")
        #expect(try status(path).st_mode & 0o7777 == 0o755)
    }

    @Test("a socket owned by another uid than the daemon's is refused")
    func foreignOwnerRefused() async throws {
        let directory = try TemporaryDirectory("socket-owner")
        defer { directory.remove() }
        let path = directory.appending("s.sock")
        let server = try await SocketFileOwnership.binding(mode: 0o770) { try await bindSocket(at: path) }
        defer { server.close(promise: nil) }
        let stranger = geteuid() == 4242 ? uid_t(4243) : uid_t(4242)
        let error = #expect(throws: ServerError.self) {
            try SocketFileOwnership.secure(path: path, mode: 0o770, group: Self.otherGroup, owner: stranger)
        }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains(path) && text.contains("owned by uid \(geteuid())"), "\(text)")
        #expect(try status(path).st_gid == getegid())
    }
}

/// The process's umask, read by setting it and back.
private func currentUmask() -> mode_t {
    let mask = umask(0o022)
    umask(mask)
    return mask
}
