import Foundation

extension PasswordPolicy {
    /// The `RELID_PASSWORD_POLICY` string sent to clients: a JSON object with the SDK's
    /// field names, in the SDK's order (minL, maxL, minDg, minUc, minLc, minSc,
    /// charsNotAllowed, Repetition, UserIDcheck, SeqCheck, BlackListedCommonPassword, msg).
    ///
    /// Types follow what the SDK sends and its helpers parse: numbers for the counts,
    /// a JSON boolean for `UserIDcheck`, and the strings `"true"`/`"false"` for `SeqCheck`
    /// and `BlackListedCommonPassword`.
    public var relidPolicyJSON: String {
        let fields: [(PasswordPolicyRule, String)] = [
            (.minL, String(minL)),
            (.maxL, String(maxL)),
            (.minDg, String(minDg)),
            (.minUc, String(minUc)),
            (.minLc, String(minLc)),
            (.minSc, String(minSc)),
            (.charsNotAllowed, Self.jsonString(charsNotAllowed)),
            (.repetition, String(repetition)),
            (.userIDCheck, userIDCheck ? "true" : "false"),
            (.seqCheck, Self.jsonString(seqCheck ? "true" : "false")),
            (.blackListedCommonPassword, Self.jsonString(blackListedCommonPassword ? "true" : "false")),
            (.msg, Self.jsonString(msg)),
        ]
        return "{" + fields.map { "\"\($0.0.sdkName)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// `s` as a JSON string literal.
    static func jsonString(_ s: String) -> String {
        QuotedString.quote(s)
    }
}

extension PasswordPolicy {
    /// Reads a `RELID_PASSWORD_POLICY` string as a client receives it, so a client can show
    /// the policy in words. Numbers may come as numbers or numeric strings and flags as
    /// booleans or `"true"`/`"false"`, as the SDK's helpers accept; missing fields are off
    /// (counts 0, checks false, `maxL` unbounded). Returns nil for text that is not a JSON object.
    public init?(relidPolicyJSON text: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return nil }
        func int(_ rule: PasswordPolicyRule) -> Int? {
            switch object[rule.sdkName] {
            case let number as NSNumber: number.intValue
            case let text as String: Int(text)
            default: nil
            }
        }
        func flag(_ rule: PasswordPolicyRule) -> Bool {
            switch object[rule.sdkName] {
            case let text as String: text.lowercased() == "true"
            case let number as NSNumber: number.boolValue
            default: false
            }
        }
        self.init(
            minL: int(.minL) ?? 0, maxL: int(.maxL) ?? Int.max, minDg: int(.minDg) ?? 0, minUc: int(.minUc) ?? 0,
            minLc: int(.minLc) ?? 0, minSc: int(.minSc) ?? 0,
            charsNotAllowed: object[PasswordPolicyRule.charsNotAllowed.sdkName] as? String ?? "",
            repetition: int(.repetition) ?? 0, userIDCheck: flag(.userIDCheck), seqCheck: flag(.seqCheck),
            blackListedCommonPassword: flag(.blackListedCommonPassword),
            msg: object[PasswordPolicyRule.msg.sdkName] as? String ?? ""
        )
    }
}
