/// The file name under `outbox/` for a user ID.
///
/// User IDs have no whitespace or control characters but may hold `/`, be `.` or `..`, start
/// with `-`, or hold any Unicode. So the name is escaped, not refused: every byte of the UTF-8
/// form outside `A-Z a-z 0-9 . _ @ + -` becomes `%XX` (uppercase hex), and so does a leading
/// `.` or `-`. The escape is one-to-one (`%` itself is escaped), keeps ordinary IDs such as
/// `alice` or `first.last@example.com` readable, and its result is never empty, `.`, `..`,
/// hidden, or a path of more than one component.
///
/// The only refusal: a name whose escaped form exceeds 255 bytes (`NAME_MAX`), which
/// a 64-character ID of long grapheme clusters can reach.
enum OutboxFileName {
    /// The longest file name Linux file systems take.
    static let maximumLength = 255

    /// The escaped file name for `user`, or nil when it would be empty or too long.
    static func escape(_ user: String) -> String? {
        var out: [UInt8] = []
        for (offset, byte) in user.utf8.enumerated() {
            let leadingDotOrDash = offset == 0 && (byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-"))
            if isKept(byte) && !leadingDotOrDash {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        guard !out.isEmpty, out.count <= maximumLength else { return nil }
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func isKept(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "@"), UInt8(ascii: "+"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }
}
