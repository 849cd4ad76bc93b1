import Foundation
import StepSignClient
import Testing

/// Sessions: log off, reset, idle timeout (SPEC §3, docs/flows.md "Session").
@Suite("Session", .blocking)
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

    // The idle timeout (error 5 with id null idle_timeout_seconds after the last reply, then
    // closed) is IdleConnectionHandlerTests in StepSignServerTests on an EmbeddedEventLoop's
    // clock; LimitsTests.idleConnectionsFreeTheirSlots is the one real-daemon check. A closed
    // connection's login and challenge end with it: loginIsPerConnection below.

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
