import Testing
import StepSignProtocol
import StepSignCommonPasswords
@testable import StepSignConfig

@Suite("Password policy checks")
struct PasswordPolicyCheckerTests {
    /// Satisfies the default policy for user "alice".
    static let good = "Tr0ub4dor&Zq"
    let checker = PasswordPolicyChecker(policy: .default)

    private func rule(_ password: String, userID: String = "alice", policy: PasswordPolicy = .default) -> PasswordPolicyRule? {
        PasswordPolicyChecker(policy: policy).violation(password: password, userID: userID)?.rule
    }

    @Test func aPasswordThatMeetsEveryRulePasses() {
        #expect(checker.violation(password: Self.good, userID: "alice") == nil)
        #expect(checker.violations(password: Self.good, userID: "alice").isEmpty)
    }

    @Test func tooShortBreaksMinL() {
        #expect(rule("Tr0u&bZ") == .minL)
    }

    @Test func lengthCountsCharactersNotBytes() {
        // Eight characters, one of them "é" as e + combining acute (two scalars, three bytes).
        let password = "Tr0&bZe\u{301}q"
        #expect(password.count == 8)
        #expect(rule(password, policy: PasswordPolicy(minL: 9)) == .minL)
        #expect(rule(password, policy: PasswordPolicy(minL: 8, maxL: 8)) == nil)
    }

    @Test func tooLongBreaksMaxL() {
        #expect(rule(Self.good + "xQ9", policy: PasswordPolicy(maxL: 14)) == .maxL)
    }

    @Test func noDigitBreaksMinDg() {
        #expect(rule("Troubador&Zq") == .minDg)
    }

    @Test func noUppercaseBreaksMinUc() {
        #expect(rule("tr0ub4dor&zq") == .minUc)
    }

    @Test func noLowercaseBreaksMinLc() {
        #expect(rule("TR0UB4DOR&ZQ") == .minLc)
    }

    @Test func noSpecialCharacterBreaksMinSc() {
        #expect(rule("Tr0ub4dorXZq") == .minSc)
    }

    @Test func countsAboveOneAreEnforced() {
        let policy = PasswordPolicy(minDg: 3)
        #expect(rule(Self.good, policy: policy) == .minDg)
        #expect(rule(Self.good + "7", policy: policy) == nil)
    }

    @Test func aForbiddenCharacterBreaksCharsNotAllowed() {
        #expect(rule(Self.good, policy: PasswordPolicy(charsNotAllowed: "&<>")) == .charsNotAllowed)
        #expect(rule(Self.good, policy: PasswordPolicy(charsNotAllowed: "<>")) == nil)
    }

    @Test func tooManyRepeatsInARowBreaksRepetition() {
        #expect(rule("Tr0ub4dor&Zqqqq") == .repetition)
        #expect(rule("Tr0ub4dor&Zqqq") == nil)  // three in a row is allowed by Repetition = 3
    }

    @Test func repetitionZeroMeansNoLimit() {
        #expect(rule("Tr0ub4dor&Zqqqqqq", policy: PasswordPolicy(repetition: 0)) == nil)
    }

    @Test func containingTheUserIDBreaksUserIDcheckIgnoringCase() {
        #expect(rule("Tr0&ALICEzq", userID: "alice") == .userIDCheck)
        #expect(rule("Tr0&ALICEzq", userID: "alice", policy: PasswordPolicy(userIDCheck: false)) == nil)
    }

    @Test(arguments: ["Xy&9abcQ", "Xy&9CBAq", "Q&z123Wx", "Q&z987Wx", "Q&zaBcWx1"])
    func anAscendingOrDescendingRunOfThreeBreaksSeqCheck(password: String) {
        #expect(rule(password) == .seqCheck)
    }

    @Test func aRunOfTwoOrAMixedRunPassesSeqCheck() {
        #expect(rule("Xy&9abQ1") == nil)
        #expect(rule("Xy&9a1b2Q") == nil)
        #expect(rule("Xy&9abcQ", policy: PasswordPolicy(seqCheck: false)) == nil)
    }

    @Test func aCommonPasswordBreaksBlackListedCommonPasswordIgnoringCase() {
        let policy = PasswordPolicy(minL: 1, minDg: 0, minUc: 0, minLc: 0, minSc: 0, seqCheck: false)
        #expect(rule("PassWord", policy: policy) == .blackListedCommonPassword)
        #expect(rule("PassWord", policy: PasswordPolicy(
            minL: 1, minDg: 0, minUc: 0, minLc: 0, minSc: 0, seqCheck: false,
            blackListedCommonPassword: false)) == nil)
    }

    @Test func aCustomListReplacesTheBuiltInOne() {
        let policy = PasswordPolicy(minL: 1, minDg: 0, minUc: 0, minLc: 0, minSc: 0, seqCheck: false)
        let custom = PasswordPolicyChecker(policy: policy, commonPasswords: CommonPasswords(["Hunter2-Corp"]))
        #expect(custom.violation(password: "hunter2-corp", userID: "bob")?.rule == .blackListedCommonPassword)
        #expect(custom.violation(password: "password", userID: "bob") == nil)
    }

    @Test func theViolationMessageNamesTheRule() {
        let violation = checker.violation(password: "Troubador&Zq", userID: "alice")
        #expect(violation?.message == "must contain at least 1 digit (minDg)")
        #expect(checker.violation(password: "Tr0u&bZ", userID: "alice")?.message
            == "must be at least 8 characters long (minL)")
    }

    @Test func aCustomMsgDoesNotHideTheRuleInTheViolation() {
        let custom = PasswordPolicyChecker(policy: PasswordPolicy(msg: "Ask IT for the rules."))
        #expect(custom.violation(password: "Troubador&Zq", userID: "alice")?.message
            == "must contain at least 1 digit (minDg)")
    }

    @Test func violationsListsEveryBrokenRuleInSDKOrder() {
        let rules = checker.violations(password: "kxqqqqj", userID: "alice").map(\.rule)
        #expect(rules == [.minL, .minDg, .minUc, .minSc, .repetition])
    }
}
