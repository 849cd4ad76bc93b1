import Foundation
import StepSignClient
import Testing

/// Sessions: log off, reset, idle timeout (SPEC §3, docs/flows.md "Session").
@Suite("Session", .blocking)
struct SessionTests {
    // The flows below need no process: they run in-process (``ScenarioHost``), the engine's
    // sessions being the connections' (SPEC §3).

    @Test("logOff answers onUserLoggedOff and getUser; then getAllChallenges and logOff are error 11")
    func logOff() async throws {
        let connection = try await ScenarioHost.withUser(.inProcess).connect()
        try await connection.requireLogin()
        let reply = try await connection.call("logOff")
        #expect(reply.code == 0)
        #expect(reply.eventNames == ["onUserLoggedOff", "getUser"])
        #expect(reply.string("user", of: "onUserLoggedOff") == "alice")
        #expect(try await connection.call("getAllChallenges").code == 11)
        #expect(try await connection.call("logOff").code == 11)
        // A new login works on the same connection.
        try await connection.requireLogin()
    }

    @Test("logOff without a login is error 11")
    func logOffWithoutLogin() async throws {
        let reply = try await ScenarioHost(.inProcess).connect().call("logOff")
        #expect(reply.code == 11)
        #expect(reply.events.isEmpty)
    }

    @Test("resetAuthState during a login answers getUser; the password challenge is gone (setPassword is 11)")
    func resetDuringLogin() async throws {
        let connection = try await ScenarioHost.withUser(.inProcess).connect()
        _ = try await connection.call("setUser", ["user": "alice"])
        let reset = try await connection.call("resetAuthState")
        #expect(reset.code == 0)
        #expect(reset.eventNames == ["getUser"])
        let answer = try await connection.call("setPassword", ["password": .string(Passwords.initial), "challengeMode": 0])
        #expect(answer.code == 11)
        // A new flow can start.
        #expect(try await connection.call("setUser", ["user": "alice"]).eventNames == ["getPassword"])
    }

    @Test("resetAuthState cancels an open update challenge but keeps the login")
    func resetKeepsLogin() async throws {
        let connection = try await ScenarioHost.withUser(.inProcess).connect()
        try await connection.requireLogin()
        _ = try await connection.call("initiateUpdateFlowForCredential", ["credentialType": "Password"])
        #expect(try await connection.call("resetAuthState").eventNames == ["getUser"])
        let update = try await connection.call("updatePassword", [
            "currentPassword": .string(Passwords.initial), "newPassword": .string(Passwords.second), "challengeMode": 2,
        ])
        #expect(update.code == 11)
        #expect(try await connection.call("getAllChallenges").eventNames == ["onCredentialsAvailableForUpdate"])
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
