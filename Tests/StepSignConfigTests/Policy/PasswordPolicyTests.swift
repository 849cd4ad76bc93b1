import Foundation
import StepSignProtocol
import Testing
@testable import StepSignConfig

@Suite("Password policy JSON and description")
struct PasswordPolicyTests {
    @Test func policyJSONCarriesTheConfiguredValuesUnderSDKNames() throws {
        let policy = PasswordPolicy(
            minL: 10, maxL: 40, minDg: 2, minUc: 3, minLc: 4, minSc: 0,
            charsNotAllowed: "\"<>", repetition: 2, userIDCheck: false, seqCheck: true,
            blackListedCommonPassword: false, msg: "Use a passphrase.")
        let data = Data(policy.relidPolicyJSON.utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys) == Set(PasswordPolicyRule.allCases.map(\.sdkName)))
        #expect(object["minL"] as? Int == 10)
        #expect(object["maxL"] as? Int == 40)
        #expect(object["minDg"] as? Int == 2)
        #expect(object["minUc"] as? Int == 3)
        #expect(object["minLc"] as? Int == 4)
        #expect(object["minSc"] as? Int == 0)
        #expect(object["charsNotAllowed"] as? String == "\"<>")
        #expect(object["Repetition"] as? Int == 2)
        #expect(object["UserIDcheck"] as? Bool == false)
        #expect(object["SeqCheck"] as? String == "true")
        #expect(object["BlackListedCommonPassword"] as? String == "false")
        #expect(object["msg"] as? String == "Use a passphrase.")
    }

    @Test func policyJSONHasAStableKeyOrder() {
        #expect(PasswordPolicy.default.relidPolicyJSON == """
            {"minL":8,"maxL":64,"minDg":1,"minUc":1,"minLc":1,"minSc":1,"charsNotAllowed":"",\
            "Repetition":3,"UserIDcheck":true,"SeqCheck":"true","BlackListedCommonPassword":"true","msg":""}
            """)
    }

    @Test func theDefaultPolicyInWords() {
        #expect(PasswordPolicy.default.description == """
            Password must be 8 to 64 characters long, contain at least 1 digit, \
            1 uppercase letter, 1 lowercase letter, 1 special character, \
            not have any character more than 3 times in a row, not contain your user ID, \
            not contain sequences such as 123, abc or cba, and not be a commonly used password.
            """)
    }

    @Test func descriptionSaysExactlyPluralsAndSkipsRulesNotInForce() {
        let policy = PasswordPolicy(
            minL: 12, maxL: 12, minDg: 2, minUc: 0, minLc: 0, minSc: 3, charsNotAllowed: "<>",
            repetition: 0, userIDCheck: false, seqCheck: false, blackListedCommonPassword: false)
        #expect(policy.description == """
            Password must be exactly 12 characters long, contain at least 2 digits, \
            3 special characters, and not contain any of these characters: <>.
            """)
    }

    @Test func descriptionOfTwoRequirementsUsesAnd() {
        let policy = PasswordPolicy(
            minL: 4, maxL: 8, minDg: 0, minUc: 0, minLc: 0, minSc: 0,
            repetition: 1, userIDCheck: false, seqCheck: false, blackListedCommonPassword: false)
        #expect(policy.description
            == "Password must be 4 to 8 characters long and not have any character more than 1 time in a row.")
    }

    @Test func aNonEmptyMsgReplacesTheDescription() {
        #expect(PasswordPolicy(msg: "Ask IT for the rules.").description == "Ask IT for the rules.")
        #expect(PasswordPolicy(msg: "   ").description.hasPrefix("Password must"))
    }

    @Test func everyRuleHasItsSDKName() {
        #expect(PasswordPolicyRule.allCases.map(\.sdkName) == [
            "minL", "maxL", "minDg", "minUc", "minLc", "minSc", "charsNotAllowed", "Repetition",
            "UserIDcheck", "SeqCheck", "BlackListedCommonPassword", "msg",
        ])
    }
}
