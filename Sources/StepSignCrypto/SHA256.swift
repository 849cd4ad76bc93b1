import CLibcrypto

/// SHA-256 through libcrypto's one-shot `EVP_Digest`.
public enum SHA256 {
    /// The 32-byte digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = bytes.withContiguousStorageIfAvailable { buffer in
            EVP_Digest(buffer.baseAddress, buffer.count, &digest, &length, EVP_sha256(), nil)
        } ?? Array(bytes).withUnsafeBufferPointer { buffer in
            EVP_Digest(buffer.baseAddress, buffer.count, &digest, &length, EVP_sha256(), nil)
        }
        // EVP_Digest with SHA-256 and no engine fails only when allocation fails.
        precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed: \(OpenSSLError.drain("EVP_Digest"))")
        return digest
    }
}
