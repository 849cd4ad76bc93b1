/// The password policy of SPEC §4, with the REL-ID SDK's `RELID_PASSWORD_POLICY` fields.
///
/// Property names are the SDK's field names in lower camel case; `PasswordPolicyRule` maps
/// each to the SDK spelling (`repetition` is `Repetition`, `userIDCheck` is `UserIDcheck`,
/// `seqCheck` is `SeqCheck`, `blackListedCommonPassword` is `BlackListedCommonPassword`).
///
/// Lengths and counts are in `Character`s (grapheme clusters), so "é" written as e + U+0301
/// is one character. Configuration checks keep the policy satisfiable:
/// `1 ≤ minL ≤ maxL ≤ 1024` and `minDg + minUc + minLc + minSc ≤ maxL`.
public struct PasswordPolicy: Sendable, Equatable {
    /// `minL`: the fewest characters a password may have.
    public var minL: Int
    /// `maxL`: the most characters a password may have.
    public var maxL: Int
    /// `minDg`: the fewest digits.
    public var minDg: Int
    /// `minUc`: the fewest uppercase letters.
    public var minUc: Int
    /// `minLc`: the fewest lowercase letters.
    public var minLc: Int
    /// `minSc`: the fewest special characters (neither a letter nor a digit).
    public var minSc: Int
    /// `charsNotAllowed`: characters a password may not contain; empty allows all.
    public var charsNotAllowed: String
    /// `Repetition`: the most times one character may appear in a row; 0 for no limit.
    public var repetition: Int
    /// `UserIDcheck`: a password may not contain the user ID (ignoring case).
    public var userIDCheck: Bool
    /// `SeqCheck`: a password may not contain a run of `PasswordPolicy.sequenceRunLength`
    /// consecutive ascending or descending digits or letters (123, abc, cba, 987).
    public var seqCheck: Bool
    /// `BlackListedCommonPassword`: a password may not be a common password (ignoring case).
    public var blackListedCommonPassword: Bool
    /// `msg`: when not empty, shown to users instead of the generated description.
    public var msg: String

    /// How long an ascending or descending run must be for `SeqCheck` to refuse it.
    public static let sequenceRunLength = 3

    public init(
        minL: Int = 8,
        maxL: Int = 64,
        minDg: Int = 1,
        minUc: Int = 1,
        minLc: Int = 1,
        minSc: Int = 1,
        charsNotAllowed: String = "",
        repetition: Int = 3,
        userIDCheck: Bool = true,
        seqCheck: Bool = true,
        blackListedCommonPassword: Bool = true,
        msg: String = ""
    ) {
        self.minL = minL
        self.maxL = maxL
        self.minDg = minDg
        self.minUc = minUc
        self.minLc = minLc
        self.minSc = minSc
        self.charsNotAllowed = charsNotAllowed
        self.repetition = repetition
        self.userIDCheck = userIDCheck
        self.seqCheck = seqCheck
        self.blackListedCommonPassword = blackListedCommonPassword
        self.msg = msg
    }

    /// The policy of SPEC §6: 8 to 64 characters, at least one digit, uppercase, lowercase
    /// and special character, at most 3 repeats in a row, and every check on.
    public static let `default` = PasswordPolicy()
}
