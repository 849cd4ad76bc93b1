import Foundation
import StepSignClient
import Testing

/// The server's limits (SPEC §3, §6 `[server]`): connections, open challenges. The line limit
/// and the idle timeout are in the protocol and session suites.
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
