/// Where JSON bytes go: a `[UInt8]` (the one output the hot paths use: a writer called from
/// another module with an output of its own runs unspecialized, see `Reply.write(into:)`).
public protocol JSONOutput {
    /// Appends one byte.
    mutating func appendByte(_ byte: UInt8)
    /// Appends bytes that are already valid JSON text (or valid UTF-8 inside a string).
    mutating func appendBytes(_ bytes: UnsafeBufferPointer<UInt8>)
}

extension JSONOutput {
    /// Appends the bytes of an ASCII literal such as `"null"` or `"\"key\":"`.
    @inlinable
    public mutating func appendLiteral(_ text: StaticString) {
        text.withUTF8Buffer { appendBytes($0) }
    }

    /// Appends `value` in decimal, as `String(value)` spells it, without making the string:
    /// digits are written from the right into a 20-byte buffer on the stack (an `Int64` has at
    /// most 19 digits and a sign).
    @inlinable
    public mutating func appendDecimal(_ value: Int64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude != 0
            if value < 0 {
                start -= 1
                digits[start] = UInt8(ascii: "-")
            }
            appendBytes(UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// Appends the UTF-8 of `text` as it is (no quotes, no escaping).
    @inlinable
    public mutating func appendRaw(_ text: String) {
        var text = text
        text.withUTF8 { appendBytes($0) }
    }
}

extension Array: JSONOutput where Element == UInt8 {
    @inlinable
    public mutating func appendByte(_ byte: UInt8) {
        append(byte)
    }

    @inlinable
    public mutating func appendBytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        append(contentsOf: bytes)
    }
}
