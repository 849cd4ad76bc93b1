internal import CLibcrypto

/// SHA-256 through libcrypto's one-shot `EVP_Digest`.
public enum SHA256 {
    /// The 32-byte digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let md = algorithm
        let ok = bytes.withContiguousStorageIfAvailable { buffer in
            EVP_Digest(buffer.baseAddress, buffer.count, &digest, &length, md, nil)
        } ?? Array(bytes).withUnsafeBufferPointer { buffer in
            EVP_Digest(buffer.baseAddress, buffer.count, &digest, &length, md, nil)
        }
        // EVP_Digest with SHA-256 and no engine fails only when allocation fails.
        precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed: \(OpenSSLError.drain("EVP_Digest"))")
        return digest
    }

    /// The `EVP_MD` for SHA-256, fetched from the default provider once.
    ///
    /// `EVP_sha256()` is a legacy handle: every `EVP_Digest` or `EVP_DigestVerifyInit` given it
    /// looks the implementation up by name in the provider store, under a lock (OpenSSL 3's
    /// "implicit fetch"). An explicitly fetched `EVP_MD` skips that. It is immutable and lives
    /// as long as the process (never freed).
    static var algorithm: OpaquePointer { FetchedAlgorithm.sha256.pointer }
}

/// An `EVP_MD` fetched once; `@unchecked Sendable` because a fetched `EVP_MD` is immutable
/// and libcrypto allows using it from any number of threads.
private struct FetchedAlgorithm: @unchecked Sendable {
    let pointer: OpaquePointer

    static let sha256 = FetchedAlgorithm(pointer: EVP_MD_fetch(nil, "SHA256", nil) ?? EVP_sha256())
}
