import Foundation
import StepSignClient
import StepSignCrypto
import Testing

/// Forgot password, Path A: after a right activation code, a user with a device key logs in
/// by signing a login challenge (SPEC §3.2 `setActivationCode`, `setUserConsentForLDA`;
/// docs/flows.md "Strong authenticators / Forgot password, Path A").
@Suite("Forgot password, Path A", .blocking)
struct ForgotPasswordPathATests {
    /// A daemon with alice and her enrolled device.
    private func setUp(config: String = "") throws -> (DaemonHarness, TestDevice) {
        let daemon = try DaemonHarness(config: config)
        try daemon.addUser()
        let device = try TestDevice()
        try daemon.connect().adminEnroll(device)
        return (daemon, device)
    }

    @Test("a right activation code for a user with a device key answers getUserConsentForLDA mode 1")
    func consentAsked() throws {
        let (daemon, _) = try setUp()
        let reply = try daemon.connect().recoverWithActivationCode(daemon)
        #expect(reply.code == 0)
        #expect(reply.eventNames == ["getUserConsentForLDA"])
        #expect(reply.string("user", of: "getUserConsentForLDA") == "alice")
        #expect(reply.int("challengeMode", of: "getUserConsentForLDA") == 1)
    }

    @Test("consent true: getLDASignature mode 1 over the login text (payload stepsign-login, reason 'Log in with a device key')")
    func consentTrueAsksTheDevice() throws {
        let (daemon, device) = try setUp(config: "[forgot_password]\nmax_attempts = 4")
        let connection = try daemon.connect()
        _ = try connection.recoverWithActivationCode(daemon)
        let reply = try connection.call("setUserConsentForLDA", ["consent": true])
        #expect(reply.code == 0, "\(reply.message)")
        #expect(reply.eventNames == ["getLDASignature"])
        #expect(reply.string("user", of: "getLDASignature") == "alice")
        #expect(reply.int("challengeMode", of: "getLDASignature") == 1)
        #expect(reply.int("attemptsLeft", of: "getLDASignature") == 4, "forgot_password.max_attempts")
        #expect(reply.statusCode(of: "getLDASignature") == 100)
        #expect(reply.deviceKeys == [device.kid])
        let text = try LDAChallengeText(reply)
        #expect(text.lines.count == 8)
        #expect(text == LDAChallengeText.expected(nonce: text.nonce, user: "alice", payload: "stepsign-login",
                                                  reason: "Log in with a device key"))
    }

    @Test("the right device signature logs in (onUserLoggedIn with a session), and the session can sign")
    func rightSignatureLogsIn() throws {
        let (daemon, device) = try setUp()
        let connection = try daemon.connect()
        _ = try connection.recoverWithActivationCode(daemon)
        let challenge = try connection.call("setUserConsentForLDA", ["consent": true])
        let reply = try connection.answer(challenge, with: device)
        #expect(reply.code == 0, "\(reply.message)")
        #expect(reply.eventNames == ["onUserLoggedIn"])
        #expect(reply.string("user", of: "onUserLoggedIn") == "alice")
        #expect(reply.sessionID?.isEmpty == false)
        #expect(try connection.call("getAllChallenges").eventNames == ["onCredentialsAvailableForUpdate"])
        // The password did not change.
        #expect(try daemon.connect().login().eventNames == ["onUserLoggedIn"])
    }

    @Test("a blocked user is unblocked by Path A, and the attempt counter is reset")
    func unblocks() throws {
        let (daemon, device) = try setUp()
        let blocker = try daemon.connect()
        _ = try blocker.setUser()
        for _ in 0..<3 { _ = try blocker.setPassword(Passwords.wrong, mode: 0) }
        #expect(try daemon.userRow()?["blocked"]?.boolValue == true)

        let connection = try daemon.connect()
        #expect(try connection.recoverWithActivationCode(daemon).eventNames == ["getUserConsentForLDA"])
        let challenge = try connection.call("setUserConsentForLDA", ["consent": true])
        #expect(try connection.answer(challenge, with: device).eventNames == ["onUserLoggedIn"])
        #expect(try daemon.userRow()?["blocked"]?.boolValue == false)
        let fresh = try daemon.connect().requestLevel1()
        #expect(fresh.int("attemptsLeft", of: "getLDASignature") == 3)
    }

    @Test("consent false: Path B, getPassword mode 1 with the policy; a new password logs in")
    func consentFalseIsPathB() throws {
        let (daemon, _) = try setUp()
        let connection = try daemon.connect()
        _ = try connection.recoverWithActivationCode(daemon)
        let reply = try connection.call("setUserConsentForLDA", ["consent": false])
        #expect(reply.code == 0)
        #expect(reply.eventNames == ["getPassword"])
        #expect(reply.int("challengeMode", of: "getPassword") == 1)
        #expect(reply.passwordPolicy == PolicyFields.defaults)
        let set = try connection.setPassword(Passwords.second, mode: 1)
        #expect(set.eventNames == ["onUserLoggedIn"])
        #expect(try daemon.connect().login(password: Passwords.second).eventNames == ["onUserLoggedIn"])
    }

    @Test("a user without a device key goes straight to Path B; so does one whose only key was revoked")
    func noDeviceKeyIsPathB() throws {
        let (daemon, device) = try setUp()
        #expect(try daemon.connect().call("admin.revokeDeviceKey", ["user": "alice", "deviceKeyId": device.kid]).code == 0)
        let reply = try daemon.connect().recoverWithActivationCode(daemon)
        #expect(reply.eventNames == ["getPassword"])
        #expect(reply.int("challengeMode", of: "getPassword") == 1)
    }

    @Test("lda.enabled = false after enrolment: a right code goes to Path B")
    func ldaDisabledIsPathB() throws {
        let (daemon, _) = try setUp()
        daemon.stop()
        try DaemonHarness.config("[lda]\nenabled = false").write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        try daemon.start()
        let reply = try daemon.connect().recoverWithActivationCode(daemon)
        #expect(reply.eventNames == ["getPassword"])
        #expect(reply.int("challengeMode", of: "getPassword") == 1)
    }

    @Test("a wrong device signature in Path A: 102 with a new challenge, attempts down; the last: 153 and getUser")
    func wrongSignatureExhausts() throws {
        let (daemon, device) = try setUp()
        let connection = try daemon.connect()
        _ = try connection.recoverWithActivationCode(daemon)
        var reply = try connection.call("setUserConsentForLDA", ["consent": true])
        let stranger = try TestDevice()
        for left in [2, 1] {
            let next = try connection.setLDASignature(kid: device.kid,
                                                      signature: try stranger.sign(try LDAChallengeText(reply).bytes))
            #expect(next.code == 0, "\(next.message)")
            try #require(next.eventNames == ["getLDASignature"], "\(next.shape)")
            #expect(next.int("challengeMode", of: "getLDASignature") == 1)
            #expect(next.statusCode(of: "getLDASignature") == 102)
            #expect(next.int("attemptsLeft", of: "getLDASignature") == left)
            #expect(try LDAChallengeText(next).nonce != (try LDAChallengeText(reply).nonce))
            reply = next
        }
        let last = try connection.answer(reply, with: stranger)
        #expect(last.eventNames == ["getLDASignature", "getUser"])
        #expect(last.statusCode(of: "getLDASignature") == 153)
        #expect(last.int("attemptsLeft", of: "getLDASignature") == 0)
        // Nothing is open any more: the right signature now is error 11, and nobody is logged in.
        #expect(try connection.answer(reply, with: device).code == 11)
        #expect(try connection.call("getAllChallenges").code == 11)
    }

    @Test("a signing challenge's signature does not answer the Path A login challenge")
    func signingSignatureIsNotALogin() throws {
        let (daemon, device) = try setUp()
        let signer = try daemon.connect()
        let signing = try signer.requestLevel1(payload: "stepsign-login", reason: "Log in with a device key")
        let connection = try daemon.connect()
        _ = try connection.recoverWithActivationCode(daemon)
        let login = try connection.call("setUserConsentForLDA", ["consent": true])
        let reply = try connection.call("setLDASignature", try device.answer(signing))
        #expect(reply.statusCode(of: "getLDASignature") == 102)
        #expect(reply.eventNames == ["getLDASignature"])
        #expect(try connection.answer(reply, with: device).eventNames == ["onUserLoggedIn"])
        _ = login
    }

    @Test("setUserConsentForLDA with no consent asked is error 11")
    func consentWithoutQuestion() throws {
        let (daemon, _) = try setUp()
        let connection = try daemon.connect()
        #expect(try connection.call("setUserConsentForLDA", ["consent": true]).code == 11)
        _ = try connection.setUser()
        #expect(try connection.call("setUserConsentForLDA", ["consent": true]).code == 11)
    }
}
