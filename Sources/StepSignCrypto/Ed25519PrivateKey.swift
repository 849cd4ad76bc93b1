internal import CLibcrypto
internal import CPKCS11

/// An Ed25519 private key (RFC 8032): the log key that signs the transparency log's
/// checkpoints as C2SP signed notes (SPEC §5.5), which witnesses check. Reads and writes
/// (encrypted) PKCS#8 PEM like ``P256PrivateKey``.
///
/// `@unchecked Sendable` is safe: the `EVP_PKEY` is never mutated after `init`, and each
/// signature uses an `EVP_MD_CTX` of its own.
public final class Ed25519PrivateKey: @unchecked Sendable {
    /// The owned `EVP_PKEY`; freed in `deinit`. Nil for a key in a PKCS#11 token.
    private let pkey: OpaquePointer?
    /// The matching public key.
    public let publicKey: Ed25519PublicKey
    /// The token and `CKA_ID` of a key in a PKCS#11 token (SPEC §5.7), which signs with
    /// `CKM_EDDSA`; nil for a key in memory.
    private let tokenKey: (token: PKCS11Token, id: [UInt8])?

    /// The key's `CKA_ID` when it is in a PKCS#11 token, else nil.
    public var tokenID: [UInt8]? { tokenKey?.id }

    /// A key in `token` under `CKA_ID` `id`, whose public half is `publicKey`.
    init(token: PKCS11Token, id: [UInt8], publicKey: Ed25519PublicKey) {
        self.pkey = nil
        self.tokenKey = (token, id)
        self.publicKey = publicKey
    }

    /// Takes ownership of `pkey`, which must be an Ed25519 key pair; frees it if `init` throws.
    private init(owning pkey: OpaquePointer) throws(P256KeyError) {
        guard EVP_PKEY_is_a(pkey, "ED25519") == 1 else {
            EVP_PKEY_free(pkey)
            throw .unsupportedKey("not an Ed25519 key")
        }
        var raw = [UInt8](repeating: 0, count: Ed25519PublicKey.size)
        var length = raw.count
        guard EVP_PKEY_get_raw_public_key(pkey, &raw, &length) == 1, length == Ed25519PublicKey.size else {
            let error = OpenSSLError.drain("EVP_PKEY_get_raw_public_key")
            EVP_PKEY_free(pkey)
            throw .openSSL(error)
        }
        do {
            publicKey = try Ed25519PublicKey(raw: raw)
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
        self.pkey = pkey
        self.tokenKey = nil
    }

    deinit { if let pkey { EVP_PKEY_free(pkey) } }

    /// A new random key (OpenSSL's DRBG).
    public static func generate() throws(OpenSSLError) -> Ed25519PrivateKey {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "ED25519", nil) else { throw .drain("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(ctx) }
        try check(EVP_PKEY_keygen_init(ctx), "EVP_PKEY_keygen_init")
        var pkey: OpaquePointer?
        try check(EVP_PKEY_generate(ctx, &pkey), "EVP_PKEY_generate")
        guard let pkey else { throw .drain("EVP_PKEY_generate") }
        do {
            return try Ed25519PrivateKey(owning: pkey)
        } catch {
            if case .openSSL(let inner) = error { throw inner }
            throw OpenSSLError(operation: "EVP_PKEY_generate", queue: [error.description])
        }
    }

    /// The key whose 32-byte seed (RFC 8032's private key) is `seed`.
    public convenience init(seed: [UInt8]) throws(P256KeyError) {
        guard seed.count == 32 else { throw .malformed("an Ed25519 private key is 32 bytes, not \(seed.count)") }
        guard let pkey = EVP_PKEY_new_raw_private_key_ex(nil, "ED25519", nil, seed, seed.count) else {
            throw .openSSL(.drain("EVP_PKEY_new_raw_private_key_ex"))
        }
        try self.init(owning: pkey)
    }

    /// Reads an Ed25519 private key from PEM: PKCS#8 (`PRIVATE KEY`) or encrypted PKCS#8
    /// (`ENCRYPTED PRIVATE KEY`, needs `passphrase`). Never prompts on a terminal.
    public convenience init(pkcs8PEM: String, passphrase: [UInt8]? = nil) throws(P256KeyError) {
        try self.init(owning: try PrivateKeyPEM.read(pkcs8PEM, passphrase: passphrase))
    }

    /// The key as PKCS#8 PEM, encrypted with `passphrase` as ``P256PrivateKey/pkcs8PEM(passphrase:)``
    /// does. Store the result with mode 0600.
    /// A key in a token has no PEM: it throws.
    public func pkcs8PEM(passphrase: [UInt8]? = nil) throws(OpenSSLError) -> String {
        guard let pkey else {
            throw OpenSSLError(operation: "PEM_write", queue: ["the key is in a PKCS#11 token and is never exported"])
        }
        return try PrivateKeyPEM.write(pkey, passphrase: passphrase)
    }

    /// The 64-byte Ed25519 signature of `message` (RFC 8032, PureEdDSA: the message itself,
    /// not a digest of it).
    public func signature(for message: some Collection<UInt8>) throws(OpenSSLError) -> [UInt8] {
        let bytes = Array(message)
        if let tokenKey {
            do {
                return try tokenKey.token.sign(bytes, keyID: tokenKey.id, mechanism: UInt(CKM_EDDSA), length: 64)
            } catch {
                throw OpenSSLError(operation: error.operation, queue: [error.reason])
            }
        }
        guard let ctx = EVP_MD_CTX_new() else { throw .drain("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(ctx) }
        try check(EVP_DigestSignInit_ex(ctx, nil, nil, nil, nil, pkey, nil), "EVP_DigestSignInit_ex")
        var signature = [UInt8](repeating: 0, count: 64)
        var length = signature.count
        try check(EVP_DigestSign(ctx, &signature, &length, bytes, bytes.count), "EVP_DigestSign")
        guard length == 64 else { throw OpenSSLError(operation: "EVP_DigestSign", queue: ["an Ed25519 signature of \(length) bytes"]) }
        return signature
    }
}
