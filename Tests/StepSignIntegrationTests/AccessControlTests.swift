import Foundation
import StepSignClient
import Testing

/// Who may connect and who may use `admin.*`, by `SO_PEERCRED` (SPEC §3, `[access]`).
///
/// These run a client as `nobody` (uid 65534) with `setpriv`, so they need root; the socket
/// is 0666 in a 0755 directory so that `nobody` can reach it, and the access lists alone decide.
@Suite("Access by peer credentials", .blocking, .enabled(if: PeerClient.available, "needs root, /usr/bin/setpriv and /usr/bin/python3 to connect as another uid"))
struct AccessControlTests {
    static let nobody: UInt32 = 65534
    /// The `users` group (gid 100 on Debian), given to `nobody` as a supplementary group.
    static let usersGID: UInt32 = 100

    static let status = #"{"id":1,"op":"status"}"#
    static let listKeys = #"{"id":2,"op":"admin.listKeys"}"#

    /// A daemon whose socket `nobody` can reach, with `access` lines added to `[access]`.
    private func daemon(access: String) throws -> DaemonHarness {
        let daemon = try DaemonHarness(config: "[server]\nsocket_mode = \"0666\"\n[access]\n" + access, start: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: daemon.directory.path)
        try daemon.start()
        return daemon
    }

    @Test("a peer on no access list gets one reply with error 13 and is disconnected")
    func unlistedPeerRefused() throws {
        let daemon = try daemon(access: "")
        let transcript = try PeerClient.run(socket: daemon.socketPath, requests: [])
        #expect(transcript.replies.map(\.code) == [13], "\(transcript.raw)")
        #expect(transcript.closed, "\(transcript.raw)")
        #expect(daemon.log.contains("msg=\"refused peer\""))
        #expect(daemon.log.contains("uid=\(Self.nobody)"))
    }

    @Test("a uid in client_uids may connect and use public operations; admin.* is error 13 and the connection stays open")
    func clientByUID() throws {
        let daemon = try daemon(access: "client_uids = [0, \(Self.nobody)]")
        let transcript = try PeerClient.run(socket: daemon.socketPath, requests: [Self.status, Self.listKeys, Self.status])
        #expect(transcript.replies.map(\.code) == [0, 13, 0], "\(transcript.raw)")
        #expect(!transcript.closed, "\(transcript.raw)")
    }

    @Test("a supplementary group in client_groups admits the peer")
    func clientBySupplementaryGroup() throws {
        let daemon = try daemon(access: "client_groups = [\"users\"]")
        let transcript = try PeerClient.run(socket: daemon.socketPath, groups: [Self.usersGID],
                                            requests: [Self.status, Self.listKeys])
        #expect(transcript.replies.map(\.code) == [0, 13], "\(transcript.raw)")
    }

    @Test("without that supplementary group the same peer is refused")
    func clientGroupNeedsMembership() throws {
        let daemon = try daemon(access: "client_groups = [\"users\"]")
        let transcript = try PeerClient.run(socket: daemon.socketPath, requests: [])
        #expect(transcript.replies.map(\.code) == [13], "\(transcript.raw)")
        #expect(transcript.closed)
    }

    @Test("a supplementary group in admin_groups may use admin.*")
    func adminBySupplementaryGroup() throws {
        let daemon = try daemon(access: "admin_groups = [\"users\"]")
        let transcript = try PeerClient.run(socket: daemon.socketPath, groups: [Self.usersGID],
                                            requests: [Self.listKeys, Self.status])
        #expect(transcript.replies.map(\.code) == [0, 0], "\(transcript.raw)")
    }

    @Test("a uid in admin_uids may use admin.*")
    func adminByUID() throws {
        let daemon = try daemon(access: "admin_uids = [0, \(Self.nobody)]")
        let transcript = try PeerClient.run(socket: daemon.socketPath, requests: [Self.listKeys])
        #expect(transcript.replies.map(\.code) == [0], "\(transcript.raw)")
    }

    @Test("after a reload that lists the uid in client_uids, its next connection is admitted")
    func reloadAdmits() throws {
        let daemon = try daemon(access: "")
        #expect(try PeerClient.run(socket: daemon.socketPath, requests: []).replies.map(\.code) == [13])
        #expect(try daemon.reload(config: "[server]\nsocket_mode = \"0666\"\n[access]\nclient_uids = [0, \(Self.nobody)]") == .reloaded)
        let transcript = try PeerClient.run(socket: daemon.socketPath, requests: [Self.status])
        #expect(transcript.replies.map(\.code) == [0], "\(transcript.raw)")
    }
}
