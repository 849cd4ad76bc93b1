extension PasswordPolicy: CustomStringConvertible {
    /// The policy in words, as shown to users; `msg` instead when it is not empty.
    ///
    /// Follows the REL-ID SDK helper's wording rules: one requirement per rule that is in
    /// force (counts of 0, a `Repetition` of 0, checks that are off and an empty
    /// `charsNotAllowed` say nothing); "exactly N characters" when `minL == maxL`; plural
    /// nouns for counts above 1; the requirements joined into one sentence, the last after
    /// "and" ("A and B" for two, "A, B, and C" for more). The counted character classes
    /// share one "contain at least":
    ///
    ///     Password must be 8 to 64 characters long, contain at least 1 digit,
    ///     1 uppercase letter, 1 lowercase letter, 1 special character, not have any
    ///     character more than 3 times in a row, not contain your user ID, not contain
    ///     sequences such as 123, abc or cba, and not be a commonly used password.
    public var description: String {
        let custom = msg.trimmingWhitespace()
        if !custom.isEmpty { return msg }

        var requirements: [String] = []
        if minL == maxL {
            requirements.append("be exactly \(Self.count(minL, "character")) long")
        } else {
            requirements.append("be \(minL) to \(maxL) characters long")
        }
        let counted = [
            (minDg, "digit"), (minUc, "uppercase letter"),
            (minLc, "lowercase letter"), (minSc, "special character"),
        ].filter { $0.0 > 0 }
        for (i, (n, noun)) in counted.enumerated() {
            requirements.append((i == 0 ? "contain at least " : "") + Self.count(n, noun))
        }
        if !charsNotAllowed.isEmpty {
            requirements.append("not contain any of these characters: \(charsNotAllowed)")
        }
        if repetition > 0 {
            requirements.append("not have any character more than \(Self.count(repetition, "time")) in a row")
        }
        if userIDCheck {
            requirements.append("not contain your user ID")
        }
        if seqCheck {
            requirements.append("not contain sequences such as 123, abc or cba")
        }
        if blackListedCommonPassword {
            requirements.append("not be a commonly used password")
        }
        return "Password must " + Self.sentence(requirements) + "."
    }

    /// "1 digit", "2 digits" (also the policy checker's messages).
    public static func count(_ n: Int, _ noun: String) -> String {
        "\(n) \(noun)\(n == 1 ? "" : "s")"
    }

    /// "a", "a and b", "a, b, and c".
    static func sentence(_ parts: [String]) -> String {
        switch parts.count {
        case 0: ""
        case 1: parts[0]
        case 2: parts[0] + " and " + parts[1]
        default: parts.dropLast().joined(separator: ", ") + ", and " + parts[parts.count - 1]
        }
    }
}

extension String {
    func trimmingWhitespace() -> Substring {
        var s = Substring(self)
        while let first = s.first, first.isWhitespace { s.removeFirst() }
        while let last = s.last, last.isWhitespace { s.removeLast() }
        return s
    }
}
