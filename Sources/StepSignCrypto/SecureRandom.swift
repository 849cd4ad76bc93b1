internal import CLibcrypto

/// Cryptographically secure random bytes from OpenSSL's DRBG (`RAND_bytes`).
public enum SecureRandom {
    /// `count` random bytes. Throws only when the DRBG cannot be seeded.
    public static func bytes(count: Int) throws(OpenSSLError) -> [UInt8] {
        precondition(count >= 0 && count <= Int(Int32.max), "SecureRandom.bytes: bad count \(count)")
        var out = [UInt8](repeating: 0, count: count)
        if count == 0 { return out }
        try check(RAND_bytes(&out, Int32(count)), "RAND_bytes")
        return out
    }
}
