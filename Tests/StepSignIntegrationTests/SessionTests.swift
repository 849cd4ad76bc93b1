import Foundation
import StepSignClient
import Testing

/// Sessions: log off, reset, idle timeout (SPEC §3, docs/flows.md "Session").
@Suite("Session")
struct SessionTests {
    @Test("logOff answers onUserLoggedOff and getUser; then getAllChallenges and logOff are error 11")
    func logOff() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        try connection.requireLogin()
        let reply = try connection.call("logOff")
        #expect(reply.code == 0)
        #expect(reply.eventNames == ["onUserLoggedOff", "getUser"])
        #expect(reply.string("user", of: "onUserLoggedOff") == "alice")
        #expect(try connection.call("getAllChallenges").code == 11)
        #expect(try connection.call("logOff").code == 11)
        // A new login works on the same connection.
        try connection.requireLogin()
    }

    @Test("logOff without a login is error 11")
    func logOffWithoutLogin() throws {
        let daemon = try DaemonHarness()
        let reply = try daemon.connect().call("logOff")
        #expect(reply.code == 11)
        #expect(reply.events.isEmpty)
    }

    @Test("resetAuthState during a login answers getUser; the password challenge is gone (setPassword is 11)")
    func resetDuringLogin() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.setUser()
        let reset = try connection.call("resetAuthState")
        #expect(reset.code == 0)
        #expect(reset.eventNames == ["getUser"])
        #expect(try connection.setPassword(Passwords.initial, mode: 0).code == 11)
        // A new flow can start.
        #expect(try connection.setUser().eventNames == ["getPassword"])
    }

    @Test("resetAuthState cancels an open update challenge but keeps the login")
    func resetKeepsLogin() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.startUpdate()
        #expect(try connection.call("resetAuthState").eventNames == ["getUser"])
        #expect(try connection.updatePassword(current: Passwords.initial, new: Passwords.second, mode: 2).code == 11)
        #expect(try connection.call("getAllChallenges").eventNames == ["onCredentialsAvailableForUpdate"])
    }

    @Test("resetAuthState cancels an open activation code")
    func resetDuringForgotPassword() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.setUser()
        _ = try connection.call("forgotPassword", ["user": "alice"])
        let code = try #require(daemon.lastActivationCode())
        #expect(try connection.call("resetAuthState").eventNames == ["getUser"])
        #expect(try connection.call("setActivationCode", ["activationCode": code]).code == 11)
    }

    @Test("idle_timeout_seconds after its last reply, a connection is sent error 5 (id null) and closed")
    func idleTimeout() throws {
        let daemon = try DaemonHarness(config: "[server]\nidle_timeout_seconds = 1")
        let connection = try daemon.connect()
        #expect(try connection.call("status").code == 0)
        let reply = try ClientReply(line: connection.readLine(timeout: 10))
        #expect(reply.code == 5)
        #expect(reply.id is NSNull)
        #expect(reply.events.isEmpty)
        #expect(throws: ClientError.self) { try connection.readLine(timeout: 10) }
    }

    @Test("an idle timeout ends the session and its open login challenge")
    func idleTimeoutEndsChallenge() throws {
        let daemon = try DaemonHarness(config: "[server]\nidle_timeout_seconds = 1")
        try daemon.addUser()
        let connection = try daemon.connect()
        #expect(try connection.setUser().code == 0)
        #expect(try ClientReply(line: connection.readLine(timeout: 10)).code == 5)
        #expect(throws: ClientError.self) { try connection.readLine(timeout: 10) }
        #expect(try daemon.connect().setPassword(Passwords.initial, mode: 0).code == 11)
    }

    @Test("closing the connection ends the login: a new connection is not logged in")
    func loginIsPerConnection() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        do {
            let connection = try daemon.connect()
            try connection.requireLogin()
        }
        #expect(try daemon.connect().call("getAllChallenges").code == 11)
    }
}
