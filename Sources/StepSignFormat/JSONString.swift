/// RFC 8259 string escaping, shared by the signature claims and the wire protocol.
///
/// `"` and `\` are escaped, control characters become `\n`, `\r`, `\t` or `\u00XX`, and
/// everything else is written as its UTF-8 bytes (which Swift strings guarantee to be valid).
public enum JSONString {
    /// Appends `text` as a quoted, escaped JSON string to `out`.
    ///
    /// Most strings on the hot path (JWS, IDs, payloads) need no escaping: they are scanned
    /// over their contiguous UTF-8 and copied in one piece.
    public static func append(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        let utf8 = text.utf8
        let copied = utf8.withContiguousStorageIfAvailable { bytes in
            guard !bytes.contains(where: needsEscape) else { return false }
            out.append(contentsOf: bytes)
            return true
        } ?? false
        if !copied {
            for byte in utf8 {
                appendEscaped(byte, to: &out)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private static func appendEscaped(_ byte: UInt8, to out: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
        case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
        case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
        case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
        case 0..<0x20:
            out.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                    hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]])
        default: out.append(byte)
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
