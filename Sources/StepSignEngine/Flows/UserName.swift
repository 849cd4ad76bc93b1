import StepSignProtocol
import StepSignStorage

/// What a user ID may be (SPEC §3 "User IDs"): 1 to 64 characters, not blank, and nothing
/// that does not show as itself: no whitespace, no control characters (category Cc) and no
/// format characters (category Cf: zero-width characters, bidi controls such as U+202E, soft
/// hyphen, byte order mark, tags). A name like `alice\u{202E}gpj.exe` would show on a device
/// challenge as something it is not. And in Unicode NFC (SPEC §3): IDs are stored and
/// compared byte-wise, so an NFD spelling would be another user who looks the same. Else error 4.
enum UserName {
    static let limit = 64

    /// Checks `name`; `new`: it names a user about to be made, which must also be in NFC. A name
    /// only looked up may be in another form (a user added before the rule): byte-wise, it finds
    /// only the user spelled exactly so.
    static func validate(_ name: String, new: Bool = false) throws(StepSignError) {
        guard !name.isEmpty else { throw .invalid("\"user\" must not be empty") }
        guard name.count <= limit else { throw .invalid("\"user\" must be at most \(limit) characters") }
        guard !name.unicodeScalars.contains(where: isRefused) else {
            throw .invalid("\"user\" must not contain whitespace, control or format (zero-width, bidi) characters")
        }
        guard !new || UserIDForm.isNFC(name) else {
            throw .invalid("\"user\" must be in Unicode NFC (composed characters: \"\\u00E9\", not \"e\\u0301\")")
        }
    }

    /// Whether `scalar` may not appear in a user ID.
    static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        switch properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator: return true
        default: return properties.isWhitespace
        }
    }
}
