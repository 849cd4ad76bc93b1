/// Where JSON bytes go: a `[UInt8]`, or the server's `ByteBuffer` (through a small adapter in
/// `StepSignServer`), so a reply is written once, straight into the buffer that is sent.
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
