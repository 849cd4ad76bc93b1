internal import CLibcrypto

/// Comparisons of secrets whose running time does not depend on the bytes compared.
public enum ConstantTime {
    /// True when `a` and `b` hold the same bytes, compared with `CRYPTO_memcmp`.
    ///
    /// The lengths are not secret (a stored hash has a fixed length): a length mismatch
    /// returns false at once.
    public static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { pa in
            b.withUnsafeBytes { pb in
                CRYPTO_memcmp(pa.baseAddress, pb.baseAddress, pa.count) == 0
            }
        }
    }
}
