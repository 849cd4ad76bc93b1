extension PasswordPolicy {
    /// The `RELID_PASSWORD_POLICY` string sent to clients: a JSON object with the SDK's
    /// field names, in the SDK's order (minL, maxL, minDg, minUc, minLc, minSc,
    /// charsNotAllowed, Repetition, UserIDcheck, SeqCheck, BlackListedCommonPassword, msg).
    ///
    /// Types follow what the SDK sends and its helpers parse: numbers for the counts,
    /// a JSON boolean for `UserIDcheck`, and the strings `"true"`/`"false"` for `SeqCheck`
    /// and `BlackListedCommonPassword`.
    public var relidPolicyJSON: String {
        let members: [(PasswordPolicyRule, JSONValue)] = [
            (.minL, .int(Int64(minL))),
            (.maxL, .int(Int64(maxL))),
            (.minDg, .int(Int64(minDg))),
            (.minUc, .int(Int64(minUc))),
            (.minLc, .int(Int64(minLc))),
            (.minSc, .int(Int64(minSc))),
            (.charsNotAllowed, .string(charsNotAllowed)),
            (.repetition, .int(Int64(repetition))),
            (.userIDCheck, .bool(userIDCheck)),
            (.seqCheck, .string(seqCheck ? "true" : "false")),
            (.blackListedCommonPassword, .string(blackListedCommonPassword ? "true" : "false")),
            (.msg, .string(msg)),
        ]
        return JSONValue.object(members.map { ($0.0.sdkName, $0.1) }).jsonText
    }

    /// Reads a `RELID_PASSWORD_POLICY` string as a client receives it, so a client can show
    /// the policy in words. Numbers may come as numbers or numeric strings and flags as
    /// booleans or `"true"`/`"false"`, as the SDK's helpers accept; missing fields are off
    /// (counts 0, checks false, `maxL` unbounded). Returns nil for text that is not a JSON object.
    public init?(relidPolicyJSON text: String) {
        guard let object = try? JSONParser.parse(Array(text.utf8)), case .object = object else { return nil }
        func int(_ rule: PasswordPolicyRule) -> Int? {
            switch object[rule.sdkName] {
            case let .string(text)?: Int(text)
            case let value?: value.intValue.flatMap { Int(exactly: $0) }
            case nil: nil
            }
        }
        func flag(_ rule: PasswordPolicyRule) -> Bool {
            switch object[rule.sdkName] {
            case let .string(text)?: text.lowercased() == "true"
            case let .bool(flag)?: flag
            case let value?: (value.intValue ?? 0) != 0
            case nil: false
            }
        }
        self.init(
            minL: int(.minL) ?? 0, maxL: int(.maxL) ?? Int.max, minDg: int(.minDg) ?? 0, minUc: int(.minUc) ?? 0,
            minLc: int(.minLc) ?? 0, minSc: int(.minSc) ?? 0,
            charsNotAllowed: object[PasswordPolicyRule.charsNotAllowed.sdkName]?.stringValue ?? "",
            repetition: int(.repetition) ?? 0, userIDCheck: flag(.userIDCheck), seqCheck: flag(.seqCheck),
            blackListedCommonPassword: flag(.blackListedCommonPassword),
            msg: object[PasswordPolicyRule.msg.sdkName]?.stringValue ?? ""
        )
    }
}
