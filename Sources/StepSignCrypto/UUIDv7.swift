/// Signature IDs: UUID version 7 (RFC 9562 §5.7).
public enum UUIDv7 {
    /// A new UUIDv7 for the time `unixMilliseconds`, in lowercase canonical text
    /// (`xxxxxxxx-xxxx-7xxx-yxxx-xxxxxxxxxxxx`, y ∈ 8…b).
    ///
    /// The first 48 bits are the milliseconds, big-endian, so IDs sort by time; the 74 bits of
    /// `rand_a` and `rand_b` come from OpenSSL's DRBG, a page at a time (``IdentifierRandom``).
    /// Two IDs in the same millisecond are not ordered among themselves (no counter: stepsign
    /// only needs uniqueness and a time prefix). The 16 bytes live on the stack and the text is
    /// written into the string's own storage (one allocation per ID).
    public static func generate(unixMilliseconds: UInt64) throws(OpenSSLError) -> String {
        precondition(unixMilliseconds < 1 << 48, "UUIDv7: time beyond 48 bits")
        var random = try IdentifierRandom.shared.next(10).get()
        var value: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &value) { bytes in
            for index in 0..<6 {
                bytes[index] = UInt8(truncatingIfNeeded: unixMilliseconds >> (8 * UInt64(5 - index)))
            }
            withUnsafeBytes(of: &random) { random in
                UnsafeMutableRawBufferPointer(rebasing: bytes[6..<16]).copyMemory(from: UnsafeRawBufferPointer(rebasing: random[0..<10]))
            }
            bytes[6] = 0x70 | (bytes[6] & 0x0f)           // version 7, rand_a high nibble
            bytes[8] = 0x80 | (bytes[8] & 0x3f)           // variant 10, rand_b
        }
        return withUnsafeBytes(of: &value) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                var out = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[out] = UInt8(ascii: "-")
                        out += 1
                    }
                    text[out] = hexDigit(bytes[index] >> 4)
                    text[out + 1] = hexDigit(bytes[index] & 0x0f)
                    out += 2
                }
                return out
            }
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
