/// Text as every rule of stepsign compares it (SPEC §3): Unicode scalars, that is the bytes of
/// their UTF-8, never grapheme clusters and never canonical equivalence.
///
/// Swift's `String` compares (`==`, `hasPrefix`, `Set`, `Dictionary`) by canonical equivalence
/// over extended grapheme clusters: `"payment:\u{301} wire".hasPrefix("payment:")` is false (the
/// combining mark joins the colon's cluster), and `"jose\u{301}" == "jos\u{E9}"` is true. A rule
/// that decides with those lets a combining mark skip a `reason_prefix`, or an NFD twin of a user
/// count as that user. Every comparison a rule decides on goes through here instead.
public enum ScalarText {
    /// Whether `a` and `b` are the same scalars, byte for byte.
    @inlinable
    public static func equal(_ a: String, _ b: String) -> Bool {
        a.utf8.elementsEqual(b.utf8)
    }

    /// Whether `text`'s scalars start with `prefix`'s: `"payment:\u{301} wire"` starts with
    /// `"payment:"`.
    @inlinable
    public static func hasPrefix(_ text: String, _ prefix: String) -> Bool {
        text.utf8.starts(with: prefix.utf8)
    }

    /// Whether `list` holds `text`, byte for byte.
    @inlinable
    public static func contains(_ list: some Sequence<String>, _ text: String) -> Bool {
        list.contains { equal($0, text) }
    }

    /// Whether `list` names some text twice, byte for byte.
    public static func hasDuplicates(_ list: [String]) -> Bool {
        var seen = Set<[UInt8]>()
        return !list.allSatisfy { seen.insert(Array($0.utf8)).inserted }
    }
}
