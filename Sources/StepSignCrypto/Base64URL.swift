/// Base64url without padding, as JOSE uses it (RFC 7515 §2, RFC 4648 §5).
///
/// Decoding is strict: only the 64 base64url characters are accepted — no `=` padding, no
/// `+` or `/`, no whitespace — the length may not be 1 modulo 4, and the unused low bits of
/// the last character must be zero, so every byte string has exactly one accepted encoding.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xff, count: 256)
        for (index, char) in alphabet.enumerated() { table[Int(char)] = UInt8(index) }
        return table
    }()

    /// The unpadded base64url text of `bytes`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let encoded: [UInt8]? = bytes.withContiguousStorageIfAvailable { encodeBytes($0) }
        return String(decoding: encoded ?? Array(bytes).withUnsafeBufferPointer { encodeBytes($0) }, as: UTF8.self)
    }

    /// The unpadded base64url bytes (ASCII) of `bytes`, for building JWS signing inputs
    /// without going through `String`.
    public static func encodeToBytes(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        bytes.withContiguousStorageIfAvailable { encodeBytes($0) }
            ?? Array(bytes).withUnsafeBufferPointer { encodeBytes($0) }
    }

    static func encodeBytes(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: encodedLength(input.count)) { out, initialized in
            initialized = encode(input, into: out.baseAddress!)
        }
    }

    /// The length of the unpadded base64url text of `count` bytes.
    static func encodedLength(_ count: Int) -> Int {
        (count * 4 + 2) / 3
    }

    /// Writes the unpadded base64url text of `input` at `out`, which has room for
    /// `encodedLength(input.count)` bytes, and returns that count. No array is made, so a
    /// caller can encode straight into the storage of what it builds (a JWS).
    static func encode(_ input: UnsafeBufferPointer<UInt8>, into out: UnsafeMutablePointer<UInt8>) -> Int {
        alphabet.withUnsafeBufferPointer { alphabet in
            var i = 0, o = 0
            while i + 3 <= input.count {
                let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                out[o] = alphabet[Int(v >> 18 & 63)]
                out[o + 1] = alphabet[Int(v >> 12 & 63)]
                out[o + 2] = alphabet[Int(v >> 6 & 63)]
                out[o + 3] = alphabet[Int(v & 63)]
                i += 3; o += 4
            }
            switch input.count - i {
            case 1:
                let v = UInt32(input[i]) << 16
                out[o] = alphabet[Int(v >> 18 & 63)]
                out[o + 1] = alphabet[Int(v >> 12 & 63)]
                o += 2
            case 2:
                let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
                out[o] = alphabet[Int(v >> 18 & 63)]
                out[o + 1] = alphabet[Int(v >> 12 & 63)]
                out[o + 2] = alphabet[Int(v >> 6 & 63)]
                o += 3
            default:
                break
            }
            return o
        }
    }

    /// The bytes of strict unpadded base64url `text`, or nil if it is not exactly that.
    public static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(ascii: $0) }
    }

    /// The bytes of strict unpadded base64url given as ASCII bytes, or nil.
    public static func decode(ascii input: some Collection<UInt8>) -> [UInt8]? {
        input.withContiguousStorageIfAvailable { decode(ascii: $0) }
            ?? Array(input).withUnsafeBufferPointer { decode(ascii: $0) }
    }

    static func decode(ascii input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let remainder = input.count % 4
        if remainder == 1 { return nil }
        var out = [UInt8]()
        out.reserveCapacity(input.count * 3 / 4)
        var i = 0
        while i + 4 <= input.count {
            let a = reverse[Int(input[i])], b = reverse[Int(input[i + 1])]
            let c = reverse[Int(input[i + 2])], d = reverse[Int(input[i + 3])]
            if (a | b | c | d) & 0xc0 != 0 { return nil }
            let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
            out.append(UInt8(v >> 16 & 0xff))
            out.append(UInt8(v >> 8 & 0xff))
            out.append(UInt8(v & 0xff))
            i += 4
        }
        if remainder == 2 {
            let a = reverse[Int(input[i])], b = reverse[Int(input[i + 1])]
            if (a | b) & 0xc0 != 0 || b & 0x0f != 0 { return nil }
            out.append(a << 2 | b >> 4)
        } else if remainder == 3 {
            let a = reverse[Int(input[i])], b = reverse[Int(input[i + 1])], c = reverse[Int(input[i + 2])]
            if (a | b | c) & 0xc0 != 0 || c & 0x03 != 0 { return nil }
            out.append(a << 2 | b >> 4)
            out.append((b & 0x0f) << 4 | c >> 2)
        }
        return out
    }
}
