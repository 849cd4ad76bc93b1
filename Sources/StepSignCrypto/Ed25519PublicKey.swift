internal import CLibcrypto

/// An Ed25519 public key (RFC 8032): checks the log key's and witnesses' signatures on C2SP
/// signed notes (SPEC §5.5, §5.6).
///
/// `@unchecked Sendable` is safe: the `EVP_PKEY` is never mutated after `init`.
public final class Ed25519PublicKey: @unchecked Sendable, Equatable {
    /// The size of a public key (and of the raw encoding ``raw``).
    public static let size = 32

    /// The owned `EVP_PKEY`; freed in `deinit`.
    private let pkey: OpaquePointer
    /// The key's 32 bytes (RFC 8032's encoding).
    public let raw: [UInt8]

    /// The key whose RFC 8032 encoding is `raw`.
    public init(raw: [UInt8]) throws(P256KeyError) {
        guard raw.count == Self.size else { throw .malformed("an Ed25519 public key is 32 bytes, not \(raw.count)") }
        guard let pkey = EVP_PKEY_new_raw_public_key_ex(nil, "ED25519", nil, raw, raw.count) else {
            ERR_clear_error()
            throw .unsupportedKey("not an Ed25519 public key")
        }
        self.pkey = pkey
        self.raw = raw
    }

    deinit { EVP_PKEY_free(pkey) }

    public static func == (lhs: Ed25519PublicKey, rhs: Ed25519PublicKey) -> Bool {
        lhs.raw == rhs.raw
    }

    /// Whether `signature` is this key's Ed25519 signature of `message`.
    public func isValidSignature(_ signature: [UInt8], for message: some Collection<UInt8>) -> Bool {
        guard signature.count == 64, let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        let bytes = Array(message)
        guard EVP_DigestVerifyInit_ex(ctx, nil, nil, nil, nil, pkey, nil) == 1 else {
            ERR_clear_error()
            return false
        }
        let ok = EVP_DigestVerify(ctx, signature, signature.count, bytes, bytes.count) == 1
        if !ok { ERR_clear_error() }
        return ok
    }
}
