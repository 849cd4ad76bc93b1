import Foundation
import StepSignClient
import Testing

/// The server's limits (SPEC §3, §6 `[server]`): connections, connections per uid, idle
/// connections, open challenges. The line limit is in the protocol suite.
@Suite("Limits")
struct LimitsTests {
    /// A connection that has been served (`status` answered 0), retrying while connections
    /// closed a moment ago are still being counted.
    private func servedConnection(_ daemon: DaemonHarness) throws -> StepSignConnection {
        let deadline = Date().addingTimeInterval(10)
        while true {
            let connection = try daemon.connect()
            if try connection.call("status").code == 0 { return connection }
            guard Date() < deadline else { throw HarnessError.refused(14, "no connection slot came free") }
            usleep(50_000)
        }
    }

    @Test("one connection past max_connections gets one reply with error 14 and is closed; a slot that frees up is reused")
    func maxConnections() throws {
        let daemon = try DaemonHarness(config: "[server]\nmax_connections = 2")
        var first: StepSignConnection? = try servedConnection(daemon)
        let second = try servedConnection(daemon)
        let third = try daemon.connect()
        let refused = try ClientReply(line: third.readLine())
        #expect(refused.code == 14)
        #expect(refused.events.isEmpty)
        #expect(throws: ClientError.self) { try third.readLine(timeout: 10) }
        #expect(try second.call("status").code == 0)
        _ = first
        first = nil
        #expect(try servedConnection(daemon).call("status").code == 0)
        #expect(daemon.log.contains("too many connections"))
    }

    /// A daemon started without the harness's probe connection (waiting for its "listening"
    /// log line instead), so that the test's own connections are its first: a silent socket
    /// cannot show it holds a slot, and a probe still being counted out would take one.
    private func daemonWithoutProbe(config: String) throws -> DaemonHarness {
        let daemon = try DaemonHarness(config: config, start: false)
        try daemon.start(waitForSocket: false)
        let deadline = Date().addingTimeInterval(60)
        while !daemon.log.contains("listening") {
            guard Date() < deadline else { throw HarnessError.notReady(log: daemon.log) }
            usleep(20_000)
        }
        return daemon
    }

    @Test("silent connections holding every slot are sent error 5 (id null) at the idle timeout and closed; the slots free up")
    func idleConnectionsFreeTheirSlots() throws {
        let daemon = try daemonWithoutProbe(config: "[server]\nmax_connections = 4\nidle_timeout_seconds = 1")
        let opened = Date()
        let silent = try (0..<4).map { _ in try RawClient(socketPath: daemon.socketPath) }
        // All four slots are held: one more is refused at once.
        let extra = try RawClient(socketPath: daemon.socketPath)
        #expect(try extra.reply(timeout: 10).code == 14)
        #expect(extra.next(timeout: 10) == .closed)
        for client in silent {
            let expired = try client.reply(timeout: 10)
            #expect(expired.code == 5)
            #expect(expired.id is NSNull)
            #expect(expired.events.isEmpty)
            #expect(client.next(timeout: 10) == .closed)
        }
        #expect(Date().timeIntervalSince(opened) >= 0.9, "not before the idle timeout")
        #expect(try servedConnection(daemon).call("status").code == 0)
    }

    @Test("a connection that asks within each idle period stays open past the idle timeout")
    func activeConnectionStaysOpen() throws {
        let daemon = try DaemonHarness(config: "[server]\nidle_timeout_seconds = 1")
        let client = try RawClient(socketPath: daemon.socketPath)
        for id in 0..<6 {
            #expect(try client.call(#"{"id":\#(id),"op":"status"}"#).code == 0)
            Thread.sleep(forTimeInterval: 0.5)
        }
        #expect(try client.call(#"{"id":6,"op":"status"}"#).id as? Int == 6)
    }

    @Test("one connection past max_connections_per_uid gets error 14 and is closed; the others keep working; closing one frees a slot")
    func maxConnectionsPerUID() throws {
        let daemon = try DaemonHarness(config: "[server]\nmax_connections_per_uid = 3")
        var first: StepSignConnection? = try servedConnection(daemon)
        let second = try servedConnection(daemon)
        let third = try servedConnection(daemon)
        let fourth = try daemon.connect()
        let refused = try ClientReply(line: fourth.readLine(timeout: 10))
        #expect(refused.code == 14)
        #expect(refused.id is NSNull)
        #expect(refused.message.contains("max_connections_per_uid"))
        #expect(throws: ClientError.self) { try fourth.readLine(timeout: 10) }
        for connection in [first, second, third] {
            #expect(try connection?.call("status").code == 0)
        }
        _ = first
        first = nil
        let replacement = try servedConnection(daemon)
        #expect(try replacement.call("status").code == 0)
        // Three open again: the next one is refused again.
        let another = try daemon.connect()
        #expect(try ClientReply(line: another.readLine(timeout: 10)).code == 14)
        #expect(daemon.log.contains("too many connections of one uid"))
    }

    @Test("a password answering a signing challenge older than challenge_timeout_seconds is error 11; the challenge is gone")
    func expiredSigningChallenge() throws {
        let daemon = try DaemonHarness(config: "[server]\nchallenge_timeout_seconds = 10")
        try daemon.addUser()
        let connection = try daemon.connect()
        let challenge = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "p", "reason": "r", "authLevel": 1, "authenticatorType": 0,
        ])
        #expect(challenge.eventNames == ["getPassword"])
        sleep(11)
        let late = try connection.setPassword(Passwords.initial, mode: 12)
        #expect(late.code == 11)
        #expect(late.message.contains("expired"))
        #expect(late.events.isEmpty)
        // Gone: answering again is still 11, and a new signing is not "another authentication in progress".
        #expect(try connection.setPassword(Passwords.initial, mode: 12).code == 11)
        let again = try connection.signWithPassword(user: "alice", password: Passwords.initial)
        #expect(again.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        #expect(try daemon.connect().call("admin.auditVerify").result?["entries"] as? Int == 1)
    }

    @Test("an activation code answering a challenge older than challenge_timeout_seconds is error 11; the challenge is gone")
    func expiredActivationChallenge() throws {
        let daemon = try DaemonHarness(config: "[server]\nchallenge_timeout_seconds = 10")
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.setUser()
        #expect(try connection.call("forgotPassword", ["user": "alice"]).eventNames == ["getActivationCode"])
        let code = try #require(daemon.lastActivationCode())
        sleep(11)
        let late = try connection.call("setActivationCode", ["activationCode": code])
        #expect(late.code == 11)
        #expect(late.message.contains("expired"))
        #expect(try connection.call("setActivationCode", ["activationCode": code]).code == 11)
        #expect(try connection.setUser().eventNames == ["getPassword"])
    }

    @Test("a challenge answered within challenge_timeout_seconds is not affected")
    func challengeWithinTimeout() throws {
        let daemon = try DaemonHarness(config: "[server]\nchallenge_timeout_seconds = 10")
        try daemon.addUser()
        let reply = try daemon.connect().signWithPassword(user: "alice", password: Passwords.initial)
        #expect(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100)
    }
}
