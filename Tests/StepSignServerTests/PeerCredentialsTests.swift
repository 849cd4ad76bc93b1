import Foundation
import NIOCore
import NIOPosix
@testable import StepSignEngine
@testable import StepSignServer
import Testing
import StepSignTestSupport

/// Who asked (SPEC §3): a peer's groups are the ones it had when it connected
/// (`SO_PEERGROUPS`), like its uid and gid (`SO_PEERCRED`), not whatever `/proc/PID` says later.
@Suite("Peer credentials")
struct PeerCredentialsTests {
    @Test("groups come from SO_PEERGROUPS: a peer that drops its groups after connecting keeps them",
          .enabled(if: getuid() == 0, "setgroups needs root"))
    func groupsAtConnectTime() async throws {
        let directory = try TemporaryDirectory("peer-groups")
        defer { directory.remove() }
        let path = directory.appending("s.sock")

        let (accepted, continuation) = AsyncStream.makeStream(of: Channel.self)
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            // Nothing reads: the connection stays open until the test closes it.
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer { channel in
                continuation.yield(channel)
                return channel.eventLoop.makeSucceededVoidFuture()
            }
            .bind(unixDomainSocketPath: path).get()
        defer { server.close(promise: nil) }

        // A client that connects with groups 4242 and 4343, then drops them (what a process
        // that lends its PID, or execs something else, would look like in /proc afterwards).
        let ready = directory.appending("ready")
        let client = try Subprocess(executable: "/usr/bin/python3", arguments: ["-c", """
            import os, socket, sys, time
            os.setgroups([4242, 4343])
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[1])
            os.setgroups([])
            open(sys.argv[2], "w").close()
            time.sleep(120)
            """, path, ready])
        defer {
            client.signal(SIGKILL)
            client.wait(timeout: 10)
        }
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: ready) && client.isRunning {
            try await Task.sleep(for: .milliseconds(50))
        }
        try #require(FileManager.default.fileExists(atPath: ready), "the client did not connect")

        var iterator = accepted.makeAsyncIterator()
        let channel = try #require(await iterator.next())
        let peer = try await PeerCredentials.read(channel).get()
        #expect(peer.pid == client.pid)
        #expect(peer.uid == 0)
        #expect(peer.groups.sorted() == [4242, 4343])
        try await channel.close()
    }

    @Test("no supplementary groups: an empty list, not group 0")
    func noGroups() {
        #expect(PeerCredentials.supplementaryGroups(hasAny: false, zeroPadded: [0, 0, 0]) == [])
    }

    @Test("the kernel's sorted list is read up to the zero padding, group 0 included")
    func sortedList() {
        #expect(PeerCredentials.supplementaryGroups(hasAny: true, zeroPadded: [0, 0, 0]) == [0])
        #expect(PeerCredentials.supplementaryGroups(hasAny: true, zeroPadded: [0, 27, 100, 0, 0]) == [0, 27, 100])
        #expect(PeerCredentials.supplementaryGroups(hasAny: true, zeroPadded: [27, 100, 0, 0]) == [27, 100])
        #expect(PeerCredentials.supplementaryGroups(hasAny: true, zeroPadded: [27, 27, 100]) == [27, 100])
    }
}
