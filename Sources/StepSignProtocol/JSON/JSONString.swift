/// RFC 8259 string escaping: the one escaper of the wire protocol, the signature claims, the
/// policy JSON and the daemon's quoted logfmt values (which also escape DEL).
///
/// `"` and `\` are escaped, control characters become `\n`, `\r`, `\t` or `\u00XX`, and
/// everything else is written as its UTF-8 bytes (which Swift strings guarantee to be valid).
public enum JSONString {
    /// Appends `text` as a quoted, escaped JSON string to `out`.
    ///
    /// Most strings on the hot path (JWS, IDs, payloads) need no escaping: they are scanned
    /// over their contiguous UTF-8 and copied in one piece.
    /// `escapingDelete` also writes DEL (0x7F) as `\u007f`: valid JSON either way, and what a
    /// log line wants (a terminal shows nothing for it).
    @inlinable
    public static func append(_ text: String, to out: inout some JSONOutput, escapingDelete: Bool = false) {
        out.appendByte(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            var start = 0, index = 0
            while index < bytes.count {
                // Eight bytes at a time while none of them needs escaping.
                if index + 8 <= bytes.count,
                   !wordNeedsEscape(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self), escapingDelete: escapingDelete) {
                    index += 8
                    continue
                }
                let byte = base[index]
                if needsEscape(byte) || (escapingDelete && byte == 0x7F) {
                    if index > start { out.appendBytes(UnsafeBufferPointer(rebasing: bytes[start..<index])) }
                    appendEscaped(byte, to: &out)
                    start = index + 1
                }
                index += 1
            }
            if start < bytes.count { out.appendBytes(UnsafeBufferPointer(rebasing: bytes[start...])) }
        }
        out.appendByte(UInt8(ascii: "\""))
    }

    /// `text` as a JSON string literal, quotes included. With `escapingDelete` it is also a
    /// TOML basic string (which may not hold DEL raw).
    public static func quoted(_ text: String, escapingDelete: Bool = false) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        append(text, to: &out, escapingDelete: escapingDelete)
        return String(decoding: out, as: UTF8.self)
    }

    @inlinable
    static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// Whether any of the eight bytes in `word` needs escaping (or is DEL, with
    /// `escapingDelete`): the bit tricks that find a byte below 0x20 or equal to a given one in
    /// a whole word at once (exact: a borrow reaches a higher byte only from a byte that
    /// matched). Bytes of 0x80 and up never match.
    @inlinable
    static func wordNeedsEscape(_ word: UInt64, escapingDelete: Bool) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func hasZeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        var found = (word &- ones &* 0x20) & ~word & highs // a byte below 0x20
        found |= hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\""))))
        found |= hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
        if escapingDelete { found |= hasZeroByte(word ^ (ones &* 0x7F)) }
        return found != 0
    }

    @usableFromInline
    static func appendEscaped(_ byte: UInt8, to out: inout some JSONOutput) {
        out.appendByte(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.appendByte(byte)
        case 0x0A: out.appendByte(UInt8(ascii: "n"))
        case 0x0D: out.appendByte(UInt8(ascii: "r"))
        case 0x09: out.appendByte(UInt8(ascii: "t"))
        default:
            out.appendLiteral("u00")
            out.appendByte(hexDigit(byte >> 4))
            out.appendByte(hexDigit(byte & 0x0F))
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
