import Foundation
import StepSignClient
import Testing

/// Forgot password: activation code, then a new password in mode 1 (SPEC §3.2, docs/flows.md "Forgot password").
@Suite("Forgot password", .blocking)
struct ForgotPasswordTests {
    @Test("forgot_password.enabled = false: mode 0 says ENABLE_FORGOT_PASSWORD \"false\" and forgotPassword is error 170")
    func disabled() throws {
        let daemon = try DaemonHarness(config: "[forgot_password]\nenabled = false")
        try daemon.addUser()
        let connection = try daemon.connect()
        let challenge = try connection.setUser()
        #expect(challenge.info("ENABLE_FORGOT_PASSWORD", of: "getPassword") == "false")
        let reply = try connection.call("forgotPassword", ["user": "alice"])
        #expect(reply.code == 170)
        #expect(reply.events.isEmpty)
        #expect(daemon.outbox().isEmpty)
        // Nothing changed: the mode-0 challenge is still open.
        #expect(try connection.setPassword(Passwords.initial, mode: 0).eventNames == ["onUserLoggedIn"])
    }

    @Test("forgotPassword without an open mode-0 challenge for that user is error 170",
          arguments: ["no challenge", "logged in", "expiry challenge", "other user"])
    func notFromModeZero(situation: String) throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        switch situation {
        case "logged in": try connection.requireLogin()
        case "expiry challenge":
            #expect(try connection.loginExpired(daemon).int("challengeMode", of: "getPassword") == 4)
        case "other user": _ = try connection.setUser("bob")
        default: break
        }
        let reply = try connection.call("forgotPassword", ["user": "alice"])
        #expect(reply.code == 170)
        #expect(reply.events.isEmpty)
        #expect(daemon.outbox().isEmpty)
    }

    @Test("forgotPassword answers getActivationCode with a verification key and the attempts; the outbox line matches")
    func activationCodeSent() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.setUser()
        let reply = try connection.call("forgotPassword", ["user": "alice"])
        #expect(reply.code == 0)
        #expect(reply.eventNames == ["getActivationCode"])
        #expect(reply.string("user", of: "getActivationCode") == "alice")
        #expect(reply.int("attemptsLeft", of: "getActivationCode") == 3)
        #expect(reply.statusCode(of: "getActivationCode") == 100)
        let key = try #require(reply.string("verificationKey", of: "getActivationCode"))
        #expect(!key.isEmpty)

        // Delivered after the reply (SPEC §5.1): wait for it.
        _ = daemon.lastActivationCode()
        let lines = daemon.outbox()
        #expect(lines.count == 1)
        let delivery = try #require(lines.last)
        #expect(delivery["user"]?.stringValue == "alice")
        #expect(delivery["verificationKey"]?.stringValue == key)
        let code = try #require(delivery["activationCode"]?.stringValue)
        #expect(code.count == 8)
        #expect(delivery["expiresAt"] != nil)
        let mode = try FileManager.default.attributesOfItem(atPath: daemon.outboxPath())[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // The code is delivered out of band only.
        #expect(!reply.object.jsonText.contains(code))
    }

    @Test("wrong codes answer 106 with attempts 2 then 1; the last answers 153 and getUser, without blocking the user")
    func wrongCodes() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.setUser()
        _ = try connection.call("forgotPassword", ["user": "alice"])
        let right = try #require(daemon.lastActivationCode())
        let wrongCode = String(right.reversed()) == right ? right + "x" : String(right.reversed())
        for left in [2, 1] {
            let wrong = try connection.call("setActivationCode", ["activationCode": wrongCode])
            #expect(wrong.code == 0)
            #expect(wrong.eventNames == ["getActivationCode"])
            #expect(wrong.statusCode(of: "getActivationCode") == 106)
            #expect(wrong.int("attemptsLeft", of: "getActivationCode") == left)
        }
        let last = try connection.call("setActivationCode", ["activationCode": wrongCode])
        #expect(last.eventNames == ["getActivationCode", "getUser"])
        #expect(last.statusCode(of: "getActivationCode") == 153)
        #expect(last.int("attemptsLeft", of: "getActivationCode") == 0)
        // The code is gone, the user is not blocked.
        #expect(try connection.call("setActivationCode", ["activationCode": right]).code == 11)
        #expect(try daemon.userRow()?["blocked"]?.boolValue == false)
        let again = try connection.setUser()
        #expect(again.statusCode(of: "getPassword") == 100)
        #expect(again.int("attemptsLeft", of: "getPassword") == 3)
    }

    // An expired code (code_ttl_seconds) answering 106 is ChallengeExpiryTests.expiredCode in
    // StepSignEngineTests, on an injected clock (it slept 62 s here: the shortest TTL is 60 s).

    @Test("resendActivationCode sends a new code and key; the old code answers 106, the new one works; attempts not reset")
    func resendInvalidatesOldCode() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.setUser()
        let first = try connection.call("forgotPassword", ["user": "alice"])
        let oldCode = try #require(daemon.lastActivationCode())
        let resent = try connection.call("resendActivationCode")
        #expect(resent.code == 0)
        #expect(resent.eventNames == ["getActivationCode"])
        #expect(resent.statusCode(of: "getActivationCode") == 100)
        #expect(resent.string("verificationKey", of: "getActivationCode") != first.string("verificationKey", of: "getActivationCode"))
        let newCode = try #require(daemon.lastActivationCode())
        #expect(daemon.outbox().count == 2)
        #expect(daemon.outbox().last?["verificationKey"]?.stringValue == resent.string("verificationKey", of: "getActivationCode"))
        #expect(newCode != oldCode)

        let old = try connection.call("setActivationCode", ["activationCode": oldCode])
        #expect(old.statusCode(of: "getActivationCode") == 106)
        #expect(old.int("attemptsLeft", of: "getActivationCode") == 2)
        let again = try connection.call("resendActivationCode")
        #expect(again.int("attemptsLeft", of: "getActivationCode") == 2)
        let fresh = try #require(daemon.lastActivationCode())
        let accepted = try connection.call("setActivationCode", ["activationCode": fresh])
        #expect(accepted.eventNames == ["getPassword"])
        #expect(accepted.int("challengeMode", of: "getPassword") == 1)
    }

    @Test("resendActivationCode with no activation code open is error 11")
    func resendWithoutCode() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        #expect(try connection.call("resendActivationCode").code == 11)
        _ = try connection.setUser()
        #expect(try connection.call("resendActivationCode").code == 11)
        #expect(try connection.call("setActivationCode", ["activationCode": "12345678"]).code == 11)
    }

    @Test("the right code asks for a new password in mode 1; 190 and 164 ask again; a good one logs in")
    func newPasswordInModeOne() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        let prompt = try connection.recoverWithActivationCode(daemon)
        #expect(prompt.code == 0)
        #expect(prompt.eventNames == ["getPassword"])
        #expect(prompt.string("user", of: "getPassword") == "alice")
        #expect(prompt.int("challengeMode", of: "getPassword") == 1)
        #expect(prompt.statusCode(of: "getPassword") == 100)
        #expect(prompt.passwordPolicy == .defaults)

        let broken = try connection.setPassword(Passwords.noUppercase, mode: 1)
        #expect(broken.eventNames == ["getPassword"])
        #expect(broken.int("challengeMode", of: "getPassword") == 1)
        #expect(broken.statusCode(of: "getPassword") == 190)
        #expect(broken.statusMessage(of: "getPassword")?.contains("minUc") == true)

        // The current password counts as reused.
        let reused = try connection.setPassword(Passwords.initial, mode: 1)
        #expect(reused.eventNames == ["getPassword"])
        #expect(reused.int("challengeMode", of: "getPassword") == 1)
        #expect(reused.statusCode(of: "getPassword") == 164)
        #expect(reused.passwordPolicy == .defaults)

        let done = try connection.setPassword(Passwords.second, mode: 1)
        #expect(done.eventNames == ["onUserLoggedIn"])
        #expect(done.string("user", of: "onUserLoggedIn") == "alice")
        #expect(!(done.sessionID ?? "").isEmpty)
        #expect(try connection.call("getAllChallenges").eventNames == ["onCredentialsAvailableForUpdate"])

        #expect(try daemon.connect().login(password: Passwords.initial).statusCode(of: "getPassword") == 102)
        #expect(try daemon.connect().login(password: Passwords.second).eventNames == ["onUserLoggedIn"])
    }

    @Test("an earlier password (not the current one) is refused in mode 1 with 164")
    func earlierPasswordReusedInModeOne() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let first = try daemon.connect()
        _ = try first.recoverWithActivationCode(daemon)
        try #require(try first.setPassword(Passwords.second, mode: 1).eventNames == ["onUserLoggedIn"])
        let connection = try daemon.connect()
        _ = try connection.recoverWithActivationCode(daemon)
        #expect(try connection.setPassword(Passwords.initial, mode: 1).statusCode(of: "getPassword") == 164)
    }

    @Test("a blocked user recovers through forgot password: unblocked, fresh attempts")
    func blockedUserRecovers() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.setUser()
        for _ in 0..<3 { _ = try connection.setPassword(Passwords.wrong, mode: 0) }
        #expect(try daemon.userRow()?["blocked"]?.boolValue == true)

        let blocked = try connection.setUser()
        #expect(blocked.statusCode(of: "getPassword") == 153)
        #expect(blocked.info("ENABLE_FORGOT_PASSWORD", of: "getPassword") == "true")
        let sent = try connection.call("forgotPassword", ["user": "alice"])
        #expect(sent.eventNames == ["getActivationCode"])
        let code = try #require(daemon.lastActivationCode())
        let prompt = try connection.call("setActivationCode", ["activationCode": code])
        #expect(prompt.int("challengeMode", of: "getPassword") == 1)
        #expect(try connection.setPassword(Passwords.second, mode: 1).eventNames == ["onUserLoggedIn"])

        #expect(try daemon.userRow()?["blocked"]?.boolValue == false)
        let fresh = try daemon.connect()
        let challenge = try fresh.setUser()
        #expect(challenge.statusCode(of: "getPassword") == 100)
        #expect(challenge.int("attemptsLeft", of: "getPassword") == 3)
        #expect(try fresh.setPassword(Passwords.second, mode: 0).eventNames == ["onUserLoggedIn"])
    }

    @Test("an unknown user gets the same replies; nothing is delivered")
    func unknownUser() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        func run(_ user: String) throws -> [[String]] {
            let connection = try daemon.connect()
            _ = try connection.setUser(user)
            let sent = try connection.call("forgotPassword", ["user": user])
            #expect(!(sent.string("verificationKey", of: "getActivationCode") ?? "").isEmpty)
            let wrong = try connection.call("setActivationCode", ["activationCode": "00000000"])
            return [sent.shape, wrong.shape]
        }
        #expect(try run("alice") == run("nobody-here"))
        #expect(daemon.outbox(user: "nobody-here").isEmpty)
    }

    @Test("the activation code and the passwords never appear in the daemon's log")
    func secretsNotLogged() throws {
        let daemon = try DaemonHarness()  // log level debug
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.setUser()
        _ = try connection.setPassword(Passwords.wrong, mode: 0)
        _ = try connection.call("forgotPassword", ["user": "alice"])
        let code = try #require(daemon.lastActivationCode())
        _ = try connection.call("setActivationCode", ["activationCode": "99999999"])
        _ = try connection.call("setActivationCode", ["activationCode": code])
        _ = try connection.setPassword(Passwords.noDigit, mode: 1)
        #expect(try connection.setPassword(Passwords.second, mode: 1).eventNames == ["onUserLoggedIn"])
        let log = daemon.log
        #expect(!log.isEmpty)
        #expect(!log.contains(code))
        for secret in [Passwords.initial, Passwords.wrong, Passwords.noDigit, Passwords.second] {
            #expect(!log.contains(secret), "the log holds a password")
        }
    }
}
