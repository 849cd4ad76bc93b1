import Foundation
import StepSignClient
import StepSignTestSupport
import Synchronization
import Testing

/// The PostgreSQL connection pool is a service of the daemon's one service group (issue 40):
/// the group starts it before anything uses the store and stops it after everything that does.
@Suite("Daemon on PostgreSQL: the pool in the service group", .blocking, .enabled(if: PostgresServer.enabled))
struct PostgresShutdownTests {
    /// `count` pipelined level-0 signing requests, ids 1...count, as one write.
    private func pipelined(_ count: Int, tag: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for id in 1...count {
            let line = #"{"id":\#(id),"op":"authenticateUserAndSignData","user":"alice","payload":"\#(tag)-\#(id)","reason":"r","authLevel":0,"authenticatorType":0}"#
            bytes += Array(line.utf8) + [0x0A]
        }
        return bytes
    }

    /// Every reply line until the daemon closes the connection.
    private func readUntilClosed(_ connection: StepSignConnection) -> [ClientReply] {
        var replies: [ClientReply] = []
        while let line = try? connection.readLine(timeout: 20), let reply = try? ClientReply(line: line) {
            replies.append(reply)
        }
        return replies
    }

    @Test("""
        SIGTERM mid-load on PostgreSQL: every request in flight is answered and durable, the last checkpoint \
        covers them, and only then the pool closes its connections; no error is logged; exit 0
        """)
    func poolClosesLast() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let daemon = try DaemonHarness(config: database.config + "\n[log]\nlevel = \"info\"\n")
        let connections = try (0..<3).map { _ in try daemon.connect() }
        for (index, connection) in connections.enumerated() {
            try connection.send(pipelined(200, tag: "c\(index)"))
        }
        let first = try connections.map { try ClientReply(line: $0.readLine()) }
        let pid = try #require(daemon.pid)
        kill(pid, SIGTERM)
        // Each connection read on a thread of its own: a client that stops reading its replies
        // may lose them (ShutdownTests.stalledClientBounded), which is not what this test asks.
        let read = Mutex<[[ClientReply]]>(first.map { [$0] })
        // (Threads, not `concurrentPerform`, which runs two of the three at a time on two cores.)
        nonisolated(unsafe) let readers = connections
        let done = DispatchGroup()
        for index in readers.indices {
            done.enter()
            Thread {
                let rest = readUntilClosed(readers[index])
                read.withLock { $0[index] += rest }
                done.leave()
            }.start()
        }
        done.wait()
        let replies = read.withLock { $0 }
        #expect(daemon.stop(signal: SIGTERM, within: 15) == 0, "\(daemon.log)")

        for connectionReplies in replies {
            #expect(connectionReplies.map { $0.id.int } == Array(1...connectionReplies.count).map { Optional($0) })
            #expect(connectionReplies.allSatisfy { $0.code == 0 }, "\(connectionReplies.map(\.message))")
        }
        let answered = replies.map(\.count).reduce(0, +)
        let lines = daemon.log.split(separator: "\n").map(String.init)
        let problems = lines.filter { $0.contains("level=error") || $0.contains("level=critical") }
        #expect(problems.isEmpty, "\(problems)")
        // The order of the stop: the socket server, the last checkpoint (after the last reply's
        // commit), the engine's end, then the pool, then the process.
        func position(_ text: String) -> Int? { lines.firstIndex { $0.contains(text) } }
        let order = ["msg=\"stopped listening\"", "reason=shutdown", "msg=\"ledger checkpointed and store closed\"",
                     "msg=\"PostgreSQL connections closed\"", "msg=stopped"].map { (text: $0, at: position($0)) }
        #expect(order.allSatisfy { $0.at != nil }, "\(order)\n\(daemon.log)")
        let positions = order.compactMap(\.at)
        #expect(positions == positions.sorted(), "\(order)")
        let checkpoint = try #require(lines.last { $0.contains("reason=shutdown") })
        let size = try #require(checkpoint.split(separator: " ").first { $0.hasPrefix("size=") }.flatMap { Int($0.dropFirst(5)) })
        #expect(size == DaemonHarness.startEvents + answered, "\(checkpoint), \(answered) replies\n\(daemon.log)")

        // Durable: after a restart the ledger holds exactly the answered signatures.
        try daemon.start()
        let audit = try #require(try daemon.connect().call("admin.auditVerify").result)
        #expect(audit["ok"]?.boolValue == true, "\(audit)")
        #expect(try daemon.ledgerSignatures().count == answered, "ledger signatures vs replies received")
        #expect(daemon.stop() == 0)
    }

    @Test("""
        a service that fails on PostgreSQL (a socket path too long to listen on) shuts the group down in order: \
        the engine's end before the pool's; exit 78 as before
        """)
    func failingServiceStopsThePoolLast() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let directory = try TemporaryDirectory("pgpool")
        defer { directory.remove() }
        let config = directory.appending("stepsignd.toml")
        try DaemonHarness.writeConfig(DaemonHarness.config(database.config), to: config)
        let socket = directory.appending(String(repeating: "s", count: 120) + ".sock")
        let result = try Tools.run([Binaries.path("stepsignd"), "--config", config, "--socket", socket,
                                    "--state-dir", directory.appending("state")], timeout: 60)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("cannot listen there"), "\(result.stderr)")
        // The engine's last checkpoint still reaches PostgreSQL (a cancelled group ended the pool
        // under it: "cannot make the shutdown checkpoint … poolShutdown").
        #expect(!result.stderr.contains("level=error"), "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        func position(_ text: String) -> Int? { lines.firstIndex { $0.contains(text) } }
        let order = ["msg=\"ledger checkpointed and store closed\"", "msg=\"PostgreSQL connections closed\""]
            .map { (text: $0, at: position($0)) }
        #expect(order.allSatisfy { $0.at != nil }, "\(order)\n\(result.stderr)")
        let positions = order.compactMap(\.at)
        #expect(positions == positions.sorted(), "\(order)\n\(result.stderr)")
    }
}
