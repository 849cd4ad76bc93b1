/// Standard base64 with padding (RFC 4648 §4), as C2SP signed notes and tlog proofs use it.
///
/// Decoding is strict, like ``Base64URL``'s: only the 64 standard characters and `=` padding
/// to a multiple of four, no whitespace, and the unused low bits zero, so every byte string
/// has exactly one accepted encoding (a signature line cannot be re-encoded unseen).
public enum Base64 {
    /// The padded base64 text of `bytes`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text = Base64URL.encodeToBytes(bytes)
        for index in text.indices {
            if text[index] == UInt8(ascii: "-") { text[index] = UInt8(ascii: "+") }
            else if text[index] == UInt8(ascii: "_") { text[index] = UInt8(ascii: "/") }
        }
        while text.count % 4 != 0 { text.append(UInt8(ascii: "=")) }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes of padded base64 `text`, or nil when it is not exactly that.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var bytes = Array(text.utf8)
        guard bytes.count % 4 == 0 else { return nil }
        var padding = 0
        while padding < 2, bytes.last == UInt8(ascii: "=") {
            bytes.removeLast()
            padding += 1
        }
        for index in bytes.indices {
            switch bytes[index] {
            case UInt8(ascii: "+"): bytes[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): bytes[index] = UInt8(ascii: "_")
            case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "="): return nil
            default: break
            }
        }
        // Exactly the padding the length needs (none when it is a multiple of four already).
        guard (bytes.count + padding) % 4 == 0, padding == (4 - bytes.count % 4) % 4 else { return nil }
        return Base64URL.decode(ascii: bytes)
    }
}
