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
        let ascii = asciiCheck(name)
        guard (ascii?.count ?? name.count) <= limit else { throw .invalid("\"user\" must be at most \(limit) characters") }
        guard !(ascii?.refused ?? name.unicodeScalars.contains(where: isRefused)) else {
            throw .invalid("\"user\" must not contain whitespace, control or format (zero-width, bidi) characters")
        }
        guard !new || ascii != nil || UserIDForm.isNFC(name) else {
            throw .invalid("\"user\" must be in Unicode NFC (composed characters: \"\\u00E9\", not \"e\\u0301\")")
        }
    }

    /// For an ASCII `name` (contiguous), its `count` and whether it has a scalar ``isRefused(_:)``
    /// refuses, without Unicode property lookups (a level-0 request checks its user's name
    /// every time): in ASCII those are the controls, whitespace and space, 0x00–0x20 and 0x7F;
    /// every character is one byte except `"\r\n"`; and ASCII is in NFC. Nil for other text.
    static func asciiCheck(_ name: String) -> (count: Int, refused: Bool)? {
        let checked = name.utf8.withContiguousStorageIfAvailable { bytes -> (count: Int, refused: Bool)? in
            var refused = false, pairs = 0, previous: UInt8 = 0
            for byte in bytes {
                if byte >= 0x80 { return nil }
                if byte <= 0x20 || byte == 0x7F { refused = true }
                if byte == 0x0A && previous == 0x0D { pairs += 1 }
                previous = byte
            }
            return (bytes.count - pairs, refused)
        }
        return checked ?? nil
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
