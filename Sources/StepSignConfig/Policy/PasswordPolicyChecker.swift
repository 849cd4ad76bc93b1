import StepSignProtocol

/// Checks passwords against a `PasswordPolicy` and a list of common passwords.
///
/// Character classes, per `Character`: a digit is `isNumber`; an uppercase letter
/// `isUppercase`; a lowercase letter `isLowercase`; a special character is neither a letter
/// nor a number (punctuation, symbols, spaces, emoji). Letters without case (e.g. CJK)
/// count towards the length only.
public struct PasswordPolicyChecker: Sendable {
    /// The policy enforced.
    public var policy: PasswordPolicy
    /// The list used by `BlackListedCommonPassword`.
    public var commonPasswords: CommonPasswords

    /// A checker of `policy` with `commonPasswords` as its list; `init(policy:)` in
    /// `StepSignCommonPasswords` takes the built-in list.
    public init(policy: PasswordPolicy, commonPasswords: CommonPasswords) {
        self.policy = policy
        self.commonPasswords = commonPasswords
    }

    /// The first rule `password` breaks for the user `userID`, in the SDK's field order,
    /// or nil if it satisfies them all.
    public func violation(password: String, userID: String) -> PolicyViolation? {
        violations(password: password, userID: userID).first
    }

    /// Every rule `password` breaks for the user `userID`, in the SDK's field order.
    public func violations(password: String, userID: String) -> [PolicyViolation] {
        let p = policy
        var found: [PolicyViolation] = []
        func add(_ rule: PasswordPolicyRule, _ text: String) {
            found.append(PolicyViolation(rule: rule, message: "\(text) (\(rule.sdkName))"))
        }
        let characters = Array(password)

        if characters.count < p.minL {
            add(.minL, "must be at least \(PasswordPolicy.count(p.minL, "character")) long")
        }
        if characters.count > p.maxL {
            add(.maxL, "must be at most \(PasswordPolicy.count(p.maxL, "character")) long")
        }
        let digits = characters.count(where: \.isNumber)
        if digits < p.minDg {
            add(.minDg, "must contain at least \(PasswordPolicy.count(p.minDg, "digit"))")
        }
        let upper = characters.count(where: \.isUppercase)
        if upper < p.minUc {
            add(.minUc, "must contain at least \(PasswordPolicy.count(p.minUc, "uppercase letter"))")
        }
        let lower = characters.count(where: \.isLowercase)
        if lower < p.minLc {
            add(.minLc, "must contain at least \(PasswordPolicy.count(p.minLc, "lowercase letter"))")
        }
        let special = characters.count(where: { !$0.isLetter && !$0.isNumber })
        if special < p.minSc {
            add(.minSc, "must contain at least \(PasswordPolicy.count(p.minSc, "special character"))")
        }
        if !p.charsNotAllowed.isEmpty {
            let banned = Set(p.charsNotAllowed)
            if characters.contains(where: banned.contains) {
                add(.charsNotAllowed, "must not contain any of these characters: \(p.charsNotAllowed)")
            }
        }
        if p.repetition > 0 && Self.longestRun(characters) > p.repetition {
            add(.repetition, "must not have any character more than \(PasswordPolicy.count(p.repetition, "time")) in a row")
        }
        if p.userIDCheck && !userID.isEmpty && password.lowercased().contains(userID.lowercased()) {
            add(.userIDCheck, "must not contain the user ID")
        }
        if p.seqCheck && Self.hasSequence(characters, length: PasswordPolicy.sequenceRunLength) {
            add(.seqCheck, "must not contain sequences such as 123, abc or cba")
        }
        if p.blackListedCommonPassword && commonPasswords.contains(password) {
            add(.blackListedCommonPassword, "must not be a commonly used password")
        }
        return found
    }

    /// The length of the longest run of one repeated character.
    static func longestRun(_ characters: [Character]) -> Int {
        var longest = 0
        var run = 0
        var previous: Character?
        for c in characters {
            run = c == previous ? run + 1 : 1
            longest = max(longest, run)
            previous = c
        }
        return longest
    }

    /// Whether `characters` holds `length` ASCII digits, or ASCII letters ignoring case,
    /// each one more (or each one less) than the one before: 123, abc, CBA, 987, xYz.
    static func hasSequence(_ characters: [Character], length: Int) -> Bool {
        guard length >= 2 else { return !characters.isEmpty }
        // (class, value): class 0 for digits, 1 for letters; nil for anything else.
        let codes: [(Int, Int)?] = characters.map { c in
            guard let ascii = c.asciiValue else { return nil }
            switch ascii {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return (0, Int(ascii))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): return (1, Int(ascii))
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): return (1, Int(ascii) + 32)
            default: return nil
            }
        }
        for step in [1, -1] {
            var run = 1
            for i in codes.indices.dropFirst() {
                if let a = codes[i - 1], let b = codes[i], a.0 == b.0, b.1 - a.1 == step {
                    run += 1
                    if run >= length { return true }
                } else {
                    run = 1
                }
            }
        }
        return false
    }
}
