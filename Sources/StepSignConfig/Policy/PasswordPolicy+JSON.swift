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
