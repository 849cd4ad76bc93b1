import Foundation
import StepSignClient
import Testing

/// Every policy field of SPEC §4, enforced wherever a new password is set: mode 1 (after an
/// activation code), mode 2 (user-initiated update) and mode 4 (update on expiry). Each
/// broken rule answers status 190 whose message names the rule by its SDK field name.
@Suite("Password policy in the flows", .blocking)
struct PasswordPolicyFlowTests {
    static let modes = [1, 2, 4]

    /// Opens the new-password challenge of `mode` for alice on a new connection.
    static func openNewPasswordChallenge(_ daemon: DaemonHarness, mode: Int,
                                         sourceLocation: SourceLocation = #_sourceLocation) throws -> StepSignConnection {
        let connection = try daemon.connect()
        let prompt: ClientReply = switch mode {
        case 1: try connection.recoverWithActivationCode(daemon, sourceLocation: sourceLocation)
        case 2: try connection.startUpdate(sourceLocation: sourceLocation)
        default: try connection.loginExpired(daemon)
        }
        try #require(prompt.int("challengeMode", of: "getPassword") == mode,
                     "no mode-\(mode) prompt: \(prompt.code) \(prompt.message) \(prompt.shape)",
                     sourceLocation: sourceLocation)
        return connection
    }

    /// Offers `password` as the new one in `mode`.
    static func offer(_ password: String, mode: Int, on connection: StepSignConnection) throws -> ClientReply {
        mode == 1
            ? try connection.setPassword(password, mode: 1)
            : try connection.updatePassword(current: Passwords.initial, new: password, mode: mode)
    }

    /// Starts a daemon with `config`, offers `password` in `mode` and checks the 190 reply.
    static func expectRefused(_ password: String, rule: String, mode: Int, config: String = "",
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        let daemon = try DaemonHarness(config: config)
        try daemon.addUser()
        let connection = try openNewPasswordChallenge(daemon, mode: mode, sourceLocation: sourceLocation)
        let reply = try offer(password, mode: mode, on: connection)
        #expect(reply.code == 0, "\(reply.message)", sourceLocation: sourceLocation)
        let expectedEvents = mode == 2 ? ["onUpdateCredentialResponse", "getPassword"] : ["getPassword"]
        #expect(reply.eventNames == expectedEvents, sourceLocation: sourceLocation)
        if mode == 2 {
            #expect(reply.statusCode(of: "onUpdateCredentialResponse") == 190, sourceLocation: sourceLocation)
        }
        #expect(reply.int("challengeMode", of: "getPassword") == mode, sourceLocation: sourceLocation)
        #expect(reply.statusCode(of: "getPassword") == 190, sourceLocation: sourceLocation)
        let message = reply.statusMessage(of: "getPassword") ?? ""
        #expect(message.contains(rule), "status message \(message.debugDescription) does not name \(rule)",
                sourceLocation: sourceLocation)
        #expect(!message.contains(password), "the status message quotes the password", sourceLocation: sourceLocation)
        #expect(reply.passwordPolicy != nil, "getPassword carries no RELID_PASSWORD_POLICY", sourceLocation: sourceLocation)
    }

    @Test("minL: too short a password is refused with 190", arguments: modes)
    func minL(mode: Int) throws {
        try Self.expectRefused(Passwords.tooShort, rule: "minL", mode: mode)
    }

    @Test("maxL: too long a password is refused with 190", arguments: modes)
    func maxL(mode: Int) throws {
        try Self.expectRefused(Passwords.tooLong, rule: "maxL", mode: mode)
    }

    @Test("minDg: a password without a digit is refused with 190", arguments: modes)
    func minDg(mode: Int) throws {
        try Self.expectRefused(Passwords.noDigit, rule: "minDg", mode: mode)
    }

    @Test("minUc: a password without an uppercase letter is refused with 190", arguments: modes)
    func minUc(mode: Int) throws {
        try Self.expectRefused(Passwords.noUppercase, rule: "minUc", mode: mode)
    }

    @Test("minLc: a password without a lowercase letter is refused with 190", arguments: modes)
    func minLc(mode: Int) throws {
        try Self.expectRefused(Passwords.noLowercase, rule: "minLc", mode: mode)
    }

    @Test("minSc: a password without a special character is refused with 190", arguments: modes)
    func minSc(mode: Int) throws {
        try Self.expectRefused(Passwords.noSpecial, rule: "minSc", mode: mode)
    }

    @Test("charsNotAllowed: a password with a configured forbidden character is refused with 190", arguments: modes)
    func charsNotAllowed(mode: Int) throws {
        try Self.expectRefused(Passwords.withHash, rule: "charsNotAllowed", mode: mode,
                               config: "[password.policy]\ncharsNotAllowed = \"#\"")
    }

    @Test("Repetition: a character repeated more than 3 times in a row is refused with 190", arguments: modes)
    func repetition(mode: Int) throws {
        try Self.expectRefused(Passwords.repeated, rule: "Repetition", mode: mode)
    }

    @Test("UserIDcheck: a password containing the user ID (any case) is refused with 190", arguments: modes)
    func userIDCheck(mode: Int) throws {
        try Self.expectRefused(Passwords.withUserID, rule: "UserIDcheck", mode: mode)
    }

    @Test("SeqCheck: a password with a run like 789 is refused with 190", arguments: modes)
    func seqCheck(mode: Int) throws {
        try Self.expectRefused(Passwords.withSequence, rule: "SeqCheck", mode: mode)
    }

    @Test("BlackListedCommonPassword: a common password is refused with 190", arguments: modes)
    func blackListedCommonPassword(mode: Int) throws {
        try Self.expectRefused(Passwords.common, rule: "BlackListedCommonPassword", mode: mode)
    }

    @Test("msg: the configured text travels in the policy, and a 190 still names the broken rule", arguments: modes)
    func msgShown(mode: Int) throws {
        let text = "Use three words, a digit and a sign"
        let daemon = try DaemonHarness(config: "[password.policy]\nmsg = \"\(text)\"")
        try daemon.addUser()
        let connection = try Self.openNewPasswordChallenge(daemon, mode: mode)
        let reply = try Self.offer(Passwords.noDigit, mode: mode, on: connection)
        #expect(reply.statusCode(of: "getPassword") == 190)
        #expect(reply.statusMessage(of: "getPassword")?.contains("minDg") == true)
        var expected = PolicyFields.defaults
        expected.msg = text
        #expect(reply.passwordPolicy == expected)
    }

    @Test("a rule switched off in the config lets such a password through", arguments: modes)
    func ruleSwitchedOff(mode: Int) throws {
        let daemon = try DaemonHarness(config: "[password.policy]\nSeqCheck = false")
        try daemon.addUser()
        let connection = try Self.openNewPasswordChallenge(daemon, mode: mode)
        let reply = try Self.offer(Passwords.withSequence, mode: mode, on: connection)
        if mode == 2 {
            #expect(reply.eventNames == ["onUpdateCredentialResponse", "onUserLoggedOff", "getUser"])
            #expect(reply.statusCode(of: "onUpdateCredentialResponse") == 100)
        } else {
            #expect(reply.eventNames == ["onUserLoggedIn"])
        }
    }
}
