/// Signature IDs: UUID version 7 (RFC 9562 §5.7).
public enum UUIDv7 {
    private static let digits = Array("0123456789abcdef".utf8)

    /// A new UUIDv7 for the time `unixMilliseconds`, in lowercase canonical text
    /// (`xxxxxxxx-xxxx-7xxx-yxxx-xxxxxxxxxxxx`, y ∈ 8…b).
    ///
    /// The first 48 bits are the milliseconds, big-endian, so IDs sort by time; the 74 bits of
    /// `rand_a` and `rand_b` come from `RAND_bytes`. Two IDs in the same millisecond are not
    /// ordered among themselves (no counter: stepsign only needs uniqueness and a time prefix).
    public static func generate(unixMilliseconds: UInt64) throws(OpenSSLError) -> String {
        precondition(unixMilliseconds < 1 << 48, "UUIDv7: time beyond 48 bits")
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 {
            bytes[index] = UInt8(truncatingIfNeeded: unixMilliseconds >> (8 * UInt64(5 - index)))
        }
        let random = try SecureRandom.bytes(count: 10)
        bytes[6] = 0x70 | (random[0] & 0x0f)          // version 7, rand_a high nibble
        bytes[7] = random[1]
        bytes[8] = 0x80 | (random[2] & 0x3f)          // variant 10, rand_b
        for index in 9..<16 { bytes[index] = random[index - 6] }

        var text = [UInt8]()
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
