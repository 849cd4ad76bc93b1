/// The fields of the REL-ID SDK's `RELID_PASSWORD_POLICY`, named as the SDK names them.
///
/// `rawValue` is the SDK field name; it is also the key in `[password.policy]` of the
/// config file and in the policy JSON sent to clients. Every case but `msg` is a rule a
/// password can break.
public enum PasswordPolicyRule: String, Sendable, Hashable, CaseIterable {
    /// Minimum length, in characters.
    case minL
    /// Maximum length, in characters.
    case maxL
    /// Minimum number of digits.
    case minDg
    /// Minimum number of uppercase letters.
    case minUc
    /// Minimum number of lowercase letters.
    case minLc
    /// Minimum number of special (neither letter nor digit) characters.
    case minSc
    /// Characters a password may not contain.
    case charsNotAllowed
    /// The most times one character may be repeated in a row; 0 for no limit.
    case repetition = "Repetition"
    /// Whether a password may not contain the user ID.
    case userIDCheck = "UserIDcheck"
    /// Whether a password may not contain runs like 123, abc or cba.
    case seqCheck = "SeqCheck"
    /// Whether a password may not be on the list of common passwords.
    case blackListedCommonPassword = "BlackListedCommonPassword"
    /// Text shown to users instead of the generated description; not a rule.
    case msg

    /// The SDK's field name, e.g. `"minDg"` or `"UserIDcheck"`.
    public var sdkName: String { rawValue }
}
