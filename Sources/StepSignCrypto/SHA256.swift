internal import CLibcrypto
internal import COpenSSLShims

/// SHA-256 through libcrypto.
///
/// The hashes go through libcrypto's low-level SHA-256 (`stepsign_sha256_parts` in
/// COpenSSLShims: no `EVP_MD_CTX` and provider context allocated and freed per call, about
/// 2.4× faster for a tree node's 65 bytes; issue 43), and a message in two or three parts is
/// hashed without being copied into one array first. ``algorithm`` is the `EVP_MD` for the EVP
/// calls that need one (signature checks).
public enum SHA256 {
    /// The 32-byte digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        if let digest = bytes.withContiguousStorageIfAvailable({ digest(UnsafeRawBufferPointer($0)) }) {
            return digest
        }
        return Array(bytes).withUnsafeBytes { digest($0) }
    }

    /// The digest of `first` followed by `second` (as of `first + second`).
    public static func hash(_ first: [UInt8], _ second: [UInt8]) -> [UInt8] {
        first.withUnsafeBytes { first in second.withUnsafeBytes { second in digest(first, second) } }
    }

    /// The digest of the byte `prefix` followed by `first` and `second` (a Merkle tree's node:
    /// `0x01 || left || right`).
    public static func hash(prefix: UInt8, _ first: [UInt8], _ second: [UInt8]) -> [UInt8] {
        withUnsafeBytes(of: prefix) { prefix in
            first.withUnsafeBytes { first in second.withUnsafeBytes { second in digest(prefix, first, second) } }
        }
    }

    /// The digest of the byte `prefix` followed by `bytes` (a Merkle tree's leaf: `0x00 || data`).
    public static func hash(prefix: UInt8, _ bytes: some Collection<UInt8>) -> [UInt8] {
        withUnsafeBytes(of: prefix) { prefix in
            if let digest = bytes.withContiguousStorageIfAvailable({ digest(prefix, UnsafeRawBufferPointer($0)) }) {
                return digest
            }
            return Array(bytes).withUnsafeBytes { digest(prefix, $0) }
        }
    }

    /// The digest of the parts in order.
    private static func digest(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
                               _ third: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { digest, count in
            let ok = stepsign_sha256_parts(first.baseAddress, first.count, second.baseAddress, second.count,
                                           third.baseAddress, third.count, digest.baseAddress)
            // The low-level SHA-256 functions have nothing that can fail (no allocation).
            precondition(ok == 1, "SHA-256 failed: \(OpenSSLError.drain("SHA256_Final"))")
            count = 32
        }
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
