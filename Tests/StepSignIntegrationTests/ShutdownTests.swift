import Foundation
import StepSignClient
import Testing

/// SIGTERM (SPEC §7): stop accepting, finish the requests in flight, exit 0 — within a bound.
@Suite("Shutdown (SIGTERM)", .blocking)
struct ShutdownTests {
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

    private func signatureID(_ reply: ClientReply) -> String? {
        (reply.event("onAuthenticateUserAndSignData")?["details"])?["dataSignatureID"]?.stringValue
    }

    @Test("SIGTERM lets pipelined requests in flight finish: every reply that arrived is in the ledger after a restart, exit 0 within 10 s")
    func inFlightRequestsFinish() throws {
        let daemon = try DaemonHarness()
        let connections = try (0..<3).map { _ in try daemon.connect() }
        for (index, connection) in connections.enumerated() {
            try connection.send(pipelined(300, tag: "c\(index)"))
        }
        var replies: [[ClientReply]] = try connections.map { [try ClientReply(line: $0.readLine())] }
        let pid = try #require(daemon.pid)
        let sentAt = Date()
        kill(pid, SIGTERM)
        for (index, connection) in connections.enumerated() { replies[index] += readUntilClosed(connection) }
        let status = daemon.stop(signal: SIGTERM, within: 10 - Date().timeIntervalSince(sentAt))
        #expect(status == 0, "exit status \(String(describing: status)) after \(Date().timeIntervalSince(sentAt)) s")

        var signatureIDs: [String] = []
        for connectionReplies in replies {
            // In order and without a gap: a request is either answered or was never read.
            #expect(connectionReplies.map { $0.id.int } == Array(1...connectionReplies.count).map { Optional($0) })
            #expect(connectionReplies.allSatisfy { $0.code == 0 && $0.statusCode(of: "onAuthenticateUserAndSignData") == 100 })
            signatureIDs += connectionReplies.compactMap(signatureID)
        }
        #expect(signatureIDs.count == replies.map(\.count).reduce(0, +))

        try daemon.start()
        let admin = try daemon.connect()
        let audit = try #require(try admin.call("admin.auditVerify").result)
        #expect(audit["ok"]?.boolValue == true)
        // And the converse: nothing was signed whose reply was dropped.
        #expect(try daemon.ledgerSignatures().count == signatureIDs.count, "ledger signatures vs replies received")
        #expect(audit["entries"]?.int == (try daemon.ledgerEntries().count))
        let missing = try signatureIDs.filter { try admin.call("getSignature", ["signatureID": $0]).code != 0 }
        #expect(missing.isEmpty, "answered but not in the ledger: \(missing)")
    }

    @Test("SIGTERM with more requests read than the grace allows: each is answered or not done, never done and unanswered")
    func requestsPastTheGraceAreNotStarted() throws {
        // Each admin.addUser hashes a password at a cost that makes 80 of them outlast the
        // 5-second grace: the one in flight when it ends must still be answered, the rest not
        // started (no user added without its reply).
        let daemon = try DaemonHarness(config: "[password]\nscrypt_n = 65536")
        let connection = try daemon.connect()
        var bytes: [UInt8] = []
        for id in 1...80 {
            let line = #"{"id":\#(id),"op":"admin.addUser","user":"user\#(id)","password":"Tr1cky-Pelican-\#(id)"}"#
            bytes += Array(line.utf8) + [0x0A]
        }
        try connection.send(bytes)
        var replies = [try ClientReply(line: connection.readLine(timeout: 30))]
        let pid = try #require(daemon.pid)
        kill(pid, SIGTERM)
        replies += readUntilClosed(connection)
        #expect(daemon.stop(signal: SIGTERM, within: 15) == 0)
        #expect(replies.count < 80, "the grace ended before the last request: \(replies.count) replies")
        #expect(replies.map { $0.id.int } == Array(1...replies.count).map { Optional($0) })
        #expect(replies.allSatisfy { $0.code == 0 }, "\(replies.map(\.message))")

        try daemon.start()
        let users = try #require(try daemon.connect().call("admin.listUsers").result?["users"]?.arrayValue)
        #expect(users.count == replies.count, "users added vs replies received")
    }

    @Test("SIGTERM mid-load stops in the service group's order: signals, the socket server (replies finish), the final checkpoint of the ledger head, the store; exit 0")
    func shutdownOrder() throws {
        let daemon = try DaemonHarness(config: "[log]\nlevel = \"info\"")
        let connection = try daemon.connect()
        try connection.send(pipelined(200, tag: "order"))
        _ = try connection.readLine()
        let pid = try #require(daemon.pid)
        kill(pid, SIGTERM)
        let replies = readUntilClosed(connection)
        #expect(daemon.stop(signal: SIGTERM, within: 10) == 0)

        let lines = daemon.log.split(separator: "\n").map(String.init)
        func position(_ text: String) -> Int? { lines.firstIndex { $0.contains(text) } }
        let order = ["msg=\"shutting down\"", "msg=\"stopped listening\"", "reason=shutdown",
                     "msg=\"ledger checkpointed and store closed\"", "msg=stopped"].map { (text: $0, at: position($0)) }
        #expect(order.allSatisfy { $0.at != nil }, "\(order)\n\(daemon.log)")
        let positions = order.compactMap(\.at)
        #expect(positions == positions.sorted(), "\(order)")
        // The last checkpoint covers every entry: it was made after the last reply's commit
        // (the start's events, then one signature per reply).
        let checkpoint = try #require(lines.last { $0.contains("reason=shutdown") })
        let seq = try #require(checkpoint.split(separator: " ").first { $0.hasPrefix("size=") }.flatMap { Int($0.dropFirst(5)) })
        #expect(replies.allSatisfy { $0.code == 0 })
        #expect(seq == DaemonHarness.startEvents + 1 + replies.count, "\(checkpoint), \(replies.count + 1) replies")
    }

    @Test("SIGTERM closes idle connections and exits 0; the socket then refuses connections")
    func idleConnectionsClosed() throws {
        let daemon = try DaemonHarness()
        let idle = try daemon.connect()
        #expect(try idle.call("status").code == 0)
        let status = daemon.stop(signal: SIGTERM, within: 10)
        #expect(status == 0)
        #expect(throws: ClientError.self) { try idle.readLine(timeout: 10) }
        #expect(throws: ClientError.self) { try daemon.connect() }
        #expect(daemon.log.contains("msg=stopped"))
    }

    @Test("""
        a client that reads its replies only after the grace, within the write grace, gets the reply of every \
        request the daemon did: the replies waiting to go out are written before the connection closes
        """)
    func repliesWaitingToGoOutAreWritten() throws {
        let daemon = try DaemonHarness()
        let late = try daemon.connect()
        // More replies than the socket's buffer holds, fewer than it and the daemon's queue of
        // writes together: all 150 are done, a third of the replies wait in the daemon.
        try late.send(pipelined(150, tag: "late"))
        let deadline = Date().addingTimeInterval(30)
        while daemon.logLines(message: "signed").count < 150, Date() < deadline { usleep(50_000) }
        let pid = try #require(daemon.pid)
        let sentAt = Date()
        kill(pid, SIGTERM)
        // Past the grace, well inside the write grace.
        usleep(6_000_000)
        let replies = readUntilClosed(late)
        #expect(daemon.stop(signal: SIGTERM, within: 10) == 0, "after \(Date().timeIntervalSince(sentAt)) s")
        #expect(replies.map { $0.id.int } == Array(1...150).map { Optional($0) }, "\(replies.count) replies")
        #expect(replies.allSatisfy { $0.code == 0 })

        try daemon.start()
        #expect(try daemon.ledgerSignatures().count == 150, "ledger signatures vs replies received")
    }

    @Test("a client that stops reading its replies cannot hold up shutdown; meanwhile new connections are refused")
    func stalledClientBounded() throws {
        let daemon = try DaemonHarness()
        let stalled = try daemon.connect()
        try stalled.send(pipelined(1500, tag: "stalled"))
        // Wait until the daemon is blocked writing replies nobody reads.
        let deadline = Date().addingTimeInterval(30)
        var signed = 0
        repeat {
            usleep(100_000)
            let now = daemon.logLines(message: "signed").count
            if now == signed, now > 0 { break }
            signed = now
        } while Date() < deadline
        guard let pid = daemon.pid else { Issue.record("the daemon is not running"); return }
        let sentAt = Date()
        kill(pid, SIGTERM)
        usleep(500_000)
        #expect(daemon.pid != nil, "still draining the stalled connection")
        #expect(throws: ClientError.self) { try daemon.connect() }
        let status = daemon.stop(signal: SIGTERM, within: 10)
        #expect(status == 0, "exit status \(String(describing: status)) after \(Date().timeIntervalSince(sentAt)) s")

        try daemon.start()
        #expect(try daemon.connect().call("admin.auditVerify").result?["ok"]?.boolValue == true)
    }
}
