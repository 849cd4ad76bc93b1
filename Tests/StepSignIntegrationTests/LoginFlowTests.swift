import Foundation
import StepSignClient
import StepSignCrypto
import StepSignFormat
import Testing

/// Login with `setUser` / `setPassword` mode 0 (SPEC §3.2, docs/flows.md "Login").
@Suite("Login flow", .blocking)
struct LoginFlowTests {
    @Test("setUser asks for the password in mode 0 with ENABLE_FORGOT_PASSWORD, the right one logs in with a session id")
    func loginSucceeds() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        let challenge = try connection.setUser()
        #expect(challenge.code == 0)
        #expect(challenge.eventNames == ["getPassword"])
        #expect(challenge.string("user", of: "getPassword") == "alice")
        #expect(challenge.int("challengeMode", of: "getPassword") == 0)
        #expect(challenge.int("attemptsLeft", of: "getPassword") == 3)
        #expect(challenge.statusCode(of: "getPassword") == 100)
        #expect(challenge.info("ENABLE_FORGOT_PASSWORD", of: "getPassword") == "true")

        let loggedIn = try connection.setPassword(Passwords.initial, mode: 0)
        #expect(loggedIn.code == 0)
        #expect(loggedIn.eventNames == ["onUserLoggedIn"])
        #expect(loggedIn.string("user", of: "onUserLoggedIn") == "alice")
        let session = try #require(loggedIn.sessionID)
        #expect(!session.isEmpty)
    }

    @Test("two logins get different session ids")
    func sessionIDsDiffer() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let first = try daemon.connect().login()
        let second = try daemon.connect().login()
        let a = try #require(first.sessionID)
        let b = try #require(second.sessionID)
        #expect(a != b)
    }

    @Test("wrong passwords answer 102 with attemptsLeft 2 then 1; the last answers 153 and getUser and blocks the user")
    func wrongPasswordsBlock() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.setUser()
        let first = try connection.setPassword(Passwords.wrong, mode: 0)
        #expect(first.eventNames == ["getPassword"])
        #expect(first.int("challengeMode", of: "getPassword") == 0)
        #expect(first.statusCode(of: "getPassword") == 102)
        #expect(first.int("attemptsLeft", of: "getPassword") == 2)
        #expect(first.info("ENABLE_FORGOT_PASSWORD", of: "getPassword") == "true")
        let second = try connection.setPassword(Passwords.wrong, mode: 0)
        #expect(second.statusCode(of: "getPassword") == 102)
        #expect(second.int("attemptsLeft", of: "getPassword") == 1)
        let last = try connection.setPassword(Passwords.wrong, mode: 0)
        #expect(last.eventNames == ["getPassword", "getUser"])
        #expect(last.statusCode(of: "getPassword") == 153)
        #expect(last.int("attemptsLeft", of: "getPassword") == 0)
        #expect(try daemon.userRow()?["blocked"]?.boolValue == true)

        // The flow is closed; a new one shows the block, and even the right password is refused.
        #expect(try connection.setPassword(Passwords.initial, mode: 0).code == 11)
        let again = try connection.setUser()
        #expect(again.statusCode(of: "getPassword") == 153)
        #expect(again.int("attemptsLeft", of: "getPassword") == 0)
        let refused = try connection.setPassword(Passwords.initial, mode: 0)
        #expect(refused.code == 148)
        #expect(refused.events.isEmpty)
    }

    @Test("admin.unlockUser lets a blocked user log in again with fresh attempts")
    func unlockAfterBlock() throws {
        let daemon = try DaemonHarness(config: "[password]\nmax_attempts = 1")
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.setUser()
        let blocked = try connection.setPassword(Passwords.wrong, mode: 0)
        #expect(blocked.statusCode(of: "getPassword") == 153)
        #expect(try daemon.connect().call("admin.unlockUser", ["user": "alice"]).code == 0)
        #expect(try daemon.userRow()?["blocked"]?.boolValue == false)
        let challenge = try connection.setUser()
        #expect(challenge.int("attemptsLeft", of: "getPassword") == 1)
        #expect(challenge.statusCode(of: "getPassword") == 100)
        #expect(try connection.setPassword(Passwords.initial, mode: 0).eventNames == ["onUserLoggedIn"])
    }

    @Test("attempts are stored: a new connection does not get fresh attempts")
    func attemptsSurviveReconnect() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        _ = try daemon.connect().login(password: Passwords.wrong)
        let again = try daemon.connect().setUser()
        #expect(again.int("attemptsLeft", of: "getPassword") == 2)
    }

    @Test("a right password resets the attempt counter")
    func successResetsAttempts() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let wrong = try daemon.connect().login(password: Passwords.wrong)
        #expect(wrong.eventNames == ["getPassword"] && wrong.statusCode(of: "getPassword") == 102, "\(wrong.shape)")
        #expect(wrong.int("attemptsLeft", of: "getPassword") == 2)
        // The failure is stored: another connection sees it too, so the 3 below is a reset.
        #expect(try daemon.connect().setUser().int("attemptsLeft", of: "getPassword") == 2)
        try daemon.connect().requireLogin()
        #expect(try daemon.connect().setUser().int("attemptsLeft", of: "getPassword") == 3)
    }

    @Test("an unknown user gets the same replies as a known one, through to 153")
    func unknownUserLooksKnown() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        func run(_ user: String) throws -> [[String]] {
            let connection = try daemon.connect()
            var shapes = [try connection.setUser(user).shape]
            for _ in 0..<3 { shapes.append(try connection.setPassword(Passwords.wrong, mode: 0).shape) }
            return shapes
        }
        let known = try run("alice")
        let unknown = try run("nobody-here")
        #expect(known == unknown)
        #expect(known.last?.first == "code 0")
        #expect(known.count == 4)
    }

    @Test("after login, authenticateUserAndSignData without user signs for the session user")
    func signAsSessionUser() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        try connection.requireLogin()
        let challenge = try connection.call("authenticateUserAndSignData", [
            "payload": "pay 10 EUR", "reason": "payment", "authLevel": 1, "authenticatorType": 0,
        ])
        #expect(challenge.code == 0)
        #expect(challenge.string("user", of: "getPassword") == "alice")
        #expect(challenge.int("challengeMode", of: "getPassword") == 12)
        let signed = try connection.setPassword(Passwords.initial, mode: 12)
        #expect(signed.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        let details = try #require(signed.event("onAuthenticateUserAndSignData")?["details"])
        let claims = try StepSignSignature.verify(try #require(details["payloadSignature"]?.stringValue),
                                                  trustedKeys: try connection.trustedKeys())
        #expect(claims.sub == "alice")
    }

    @Test("after login, authenticateUserAndSignData for another user is error 4")
    func signAsOtherUserRefused() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        try daemon.addUser("bob", password: Passwords.second)
        let connection = try daemon.connect()
        try connection.requireLogin()
        let reply = try connection.call("authenticateUserAndSignData", [
            "user": "bob", "payload": "x", "reason": "y", "authLevel": 1, "authenticatorType": 0,
        ])
        #expect(reply.code == 4)
        #expect(reply.events.isEmpty)
    }

    @Test("setPassword mode 0 with no flow open is error 11")
    func setPasswordWithoutFlow() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let reply = try daemon.connect().setPassword(Passwords.initial, mode: 0)
        #expect(reply.code == 11)
        #expect(reply.events.isEmpty)
    }

    @Test("setPassword in another mode than the open mode-0 challenge is error 11 and keeps the challenge")
    func setPasswordWrongMode() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.setUser()
        #expect(try connection.setPassword(Passwords.initial, mode: 1).code == 11)
        #expect(try connection.setPassword(Passwords.initial, mode: 0).eventNames == ["onUserLoggedIn"])
    }

    @Test("setUser while a login flow is open is error 213")
    func setUserTwice() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        #expect(try connection.setUser().code == 0)
        let second = try connection.setUser("bob")
        #expect(second.code == 213)
        #expect(second.events.isEmpty)
        // The first flow is still the open one.
        #expect(try connection.setPassword(Passwords.initial, mode: 0).string("user", of: "onUserLoggedIn") == "alice")
    }
}
