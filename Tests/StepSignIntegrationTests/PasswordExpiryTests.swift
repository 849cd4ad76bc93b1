import Foundation
import StepSignClient
import Testing

/// Password expiry: status 118 and the mode-4 update (SPEC §3.2, docs/flows.md "Login … and expiry").
@Suite("Password expiry (mode 4)", .blocking)
struct PasswordExpiryTests {
    /// A policy unlike the default, so that the one sent can only be the configured one.
    static let customPolicy = """
        [password.policy]
        minL = 10
        maxL = 40
        minDg = 2
        minSc = 1
        charsNotAllowed = "#<>"
        Repetition = 2
        SeqCheck = false
        msg = "Ten or more characters, two digits and a sign"
        """

    @Test("a right password that an admin expired answers getPassword mode 4, status 118, with the configured policy")
    func expiredByAdmin() throws {
        let daemon = try DaemonHarness(config: Self.customPolicy)
        try daemon.addUser()
        let connection = try daemon.connect()
        let reply = try connection.loginExpired(daemon)
        #expect(reply.code == 0)
        #expect(reply.eventNames == ["getPassword"])
        #expect(reply.string("user", of: "getPassword") == "alice")
        #expect(reply.int("challengeMode", of: "getPassword") == 4)
        #expect(reply.statusCode(of: "getPassword") == 118)
        #expect(reply.int("attemptsLeft", of: "getPassword") == 3)
        var expected = PolicyFields()
        expected.minL = 10
        expected.maxL = 40
        expected.minDg = 2
        expected.charsNotAllowed = "#<>"
        expected.repetition = 2
        expected.seqCheck = false
        expected.msg = "Ten or more characters, two digits and a sign"
        #expect(reply.passwordPolicy == expected)
        #expect(try daemon.userRow()?["passwordExpired"]?.boolValue == true)
    }

    @Test("a user added with mustChangePassword gets mode 4 with 118 at the first login")
    func mustChangePassword() throws {
        let daemon = try DaemonHarness()
        let added = try daemon.connect().call("admin.addUser", [
            "user": "alice", "password": Passwords.initial, "mustChangePassword": true,
        ])
        #expect(added.code == 0)
        let reply = try daemon.connect().login()
        #expect(reply.int("challengeMode", of: "getPassword") == 4)
        #expect(reply.statusCode(of: "getPassword") == 118)
        #expect(reply.passwordPolicy == .defaults)
    }

    @Test("a password older than max_age_days answers mode 4 with 118")
    func expiredByAge() throws {
        // No clock to turn: the stored time the password was set is moved back two days,
        // with the daemon stopped, which is what two days passing does to the row.
        let daemon = try DaemonHarness(config: "[password]\nmax_age_days = 1")
        try daemon.addUser()
        #expect(try daemon.userRow()?["passwordExpired"]?.boolValue == false)
        try daemon.agePassword(days: 2)
        #expect(try daemon.userRow()?["passwordExpired"]?.boolValue == true)
        let reply = try daemon.connect().login()
        #expect(reply.eventNames == ["getPassword"])
        #expect(reply.int("challengeMode", of: "getPassword") == 4)
        #expect(reply.statusCode(of: "getPassword") == 118)
    }

    @Test("max_age_days = 0: an old password never expires")
    func neverExpires() throws {
        let daemon = try DaemonHarness(config: "[password]\nmax_age_days = 0")
        try daemon.addUser()
        try daemon.agePassword(days: 4000)
        #expect(try daemon.userRow()?["passwordExpired"]?.boolValue == false)
        #expect(try daemon.connect().login().eventNames == ["onUserLoggedIn"])
    }

    @Test("updatePassword mode 4 with the right current and a good new password logs in; then only the new one works")
    func updateSucceeds() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.loginExpired(daemon)
        let updated = try connection.updatePassword(current: Passwords.initial, new: Passwords.second, mode: 4)
        #expect(updated.code == 0)
        #expect(updated.eventNames == ["onUserLoggedIn"])
        #expect(updated.string("user", of: "onUserLoggedIn") == "alice")
        #expect(!(updated.sessionID ?? "").isEmpty)
        #expect(try daemon.userRow()?["passwordExpired"]?.boolValue == false)

        let old = try daemon.connect().login(password: Passwords.initial)
        #expect(old.statusCode(of: "getPassword") == 102)
        #expect(try daemon.connect().login(password: Passwords.second).eventNames == ["onUserLoggedIn"])
    }

    @Test("a new password that is an earlier one answers 164 and mode 4 again; then a fresh one succeeds")
    func reuseRefused() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let first = try daemon.connect()
        _ = try first.loginExpired(daemon)
        try #require(try first.updatePassword(current: Passwords.initial, new: Passwords.second, mode: 4).eventNames == ["onUserLoggedIn"])

        let connection = try daemon.connect()
        let prompt = try connection.loginExpired(daemon, password: Passwords.second)
        #expect(prompt.statusCode(of: "getPassword") == 118)
        let reused = try connection.updatePassword(current: Passwords.second, new: Passwords.initial, mode: 4)
        #expect(reused.code == 0)
        #expect(reused.eventNames == ["getPassword"])
        #expect(reused.int("challengeMode", of: "getPassword") == 4)
        #expect(reused.statusCode(of: "getPassword") == 164)
        #expect(reused.int("attemptsLeft", of: "getPassword") == 3)
        #expect(reused.passwordPolicy == .defaults)
        #expect(try connection.updatePassword(current: Passwords.second, new: Passwords.third, mode: 4).eventNames == ["onUserLoggedIn"])
    }

    @Test("a new password equal to the current one is error 167, and the challenge stays open")
    func sameAsCurrent() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.loginExpired(daemon)
        let same = try connection.updatePassword(current: Passwords.initial, new: Passwords.initial, mode: 4)
        #expect(same.code == 167)
        #expect(same.events.isEmpty)
        #expect(try connection.updatePassword(current: Passwords.initial, new: Passwords.second, mode: 4).eventNames == ["onUserLoggedIn"])
    }

    @Test("a new password that breaks the policy answers 190 naming the rule, mode 4 again, attempts unchanged")
    func policyBroken() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.loginExpired(daemon)
        let broken = try connection.updatePassword(current: Passwords.initial, new: Passwords.tooShort, mode: 4)
        #expect(broken.eventNames == ["getPassword"])
        #expect(broken.int("challengeMode", of: "getPassword") == 4)
        #expect(broken.statusCode(of: "getPassword") == 190)
        #expect(broken.statusMessage(of: "getPassword")?.contains("minL") == true)
        #expect(broken.int("attemptsLeft", of: "getPassword") == 3)
        #expect(broken.passwordPolicy == .defaults)
    }

    @Test("a wrong current password answers 102 with attempts 2 then 1; the last answers 153 and getUser")
    func wrongCurrentPassword() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.loginExpired(daemon)
        for left in [2, 1] {
            let wrong = try connection.updatePassword(current: Passwords.wrong, new: Passwords.second, mode: 4)
            #expect(wrong.eventNames == ["getPassword"])
            #expect(wrong.int("challengeMode", of: "getPassword") == 4)
            #expect(wrong.statusCode(of: "getPassword") == 102)
            #expect(wrong.int("attemptsLeft", of: "getPassword") == left)
        }
        let last = try connection.updatePassword(current: Passwords.wrong, new: Passwords.second, mode: 4)
        #expect(last.eventNames == ["getPassword", "getUser"])
        #expect(last.int("challengeMode", of: "getPassword") == 4)
        #expect(last.statusCode(of: "getPassword") == 153)
        #expect(last.int("attemptsLeft", of: "getPassword") == 0)
        // 153 means "attempts exhausted (blocked)" (SPEC §3.3).
        #expect(try daemon.userRow()?["blocked"]?.boolValue == true)
        #expect(try connection.updatePassword(current: Passwords.initial, new: Passwords.second, mode: 4).code == 11)
    }

    @Test("a wrong current password is checked before the policy: 102, not 190")
    func currentCheckedBeforePolicy() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.loginExpired(daemon)
        let reply = try connection.updatePassword(current: Passwords.wrong, new: Passwords.tooShort, mode: 4)
        #expect(reply.statusCode(of: "getPassword") == 102)
    }

    @Test("updatePassword mode 4 with no expiry challenge open is error 11")
    func noExpiryChallenge() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        #expect(try connection.updatePassword(current: Passwords.initial, new: Passwords.second, mode: 4).code == 11)
        _ = try connection.setUser()
        #expect(try connection.updatePassword(current: Passwords.initial, new: Passwords.second, mode: 4).code == 11)
    }

    // MARK: Step-up (mode 12) with a password that must be replaced

    /// How alice's password came to need replacing.
    enum Replace: String, CaseIterable, CustomTestStringConvertible {
        case expiredByAdmin = "admin.expirePassword"
        case expiredByAge = "older than max_age_days"
        case mustChange = "added with mustChangePassword"
        var testDescription: String { rawValue }
    }

    @Test("mode 12 with the right but expired or must-change password: status 118, nothing signed, no attempt charged",
          arguments: Replace.allCases)
    func stepUpWithExpiredPassword(_ replace: Replace) throws {
        let daemon = try DaemonHarness()
        switch replace {
        case .expiredByAdmin:
            try daemon.addUser()
            #expect(try daemon.connect().call("admin.expirePassword", ["user": "alice"]).code == 0)
        case .expiredByAge:
            try daemon.addUser()
            try daemon.agePassword(days: 91)
        case .mustChange:
            let added = try daemon.connect().call("admin.addUser", [
                "user": "alice", "password": Passwords.initial, "mustChangePassword": true,
            ])
            #expect(added.code == 0)
        }
        let connection = try daemon.connect()
        let opened = try connection.requestLevel1()
        #expect(opened.int("challengeMode", of: "getPassword") == 12)
        #expect(opened.int("attemptsLeft", of: "getPassword") == 3)
        let answered = try connection.setPassword(Passwords.initial, mode: 12)
        #expect(answered.code == 0)
        #expect(answered.eventNames == ["onAuthenticateUserAndSignData"])
        #expect(answered.statusCode(of: "onAuthenticateUserAndSignData") == 118)
        #expect(answered.signingDetails?["payloadSignature"]?.stringValue == "")
        #expect(answered.signingDetails?["dataSignatureID"]?.stringValue == "")
        #expect(try daemon.connect().call("status").result?["signatures"]?.int == 0)
        // The right password cost no attempt: a new challenge still offers all three.
        let again = try connection.requestLevel1()
        #expect(again.int("attemptsLeft", of: "getPassword") == 3, "\(again.shape)")
        // A wrong one is still a failed attempt, as before.
        let wrong = try connection.setPassword(Passwords.wrong, mode: 12)
        #expect(wrong.statusCode(of: "getPassword") == 102)
        #expect(wrong.int("attemptsLeft", of: "getPassword") == 2)
    }
}
