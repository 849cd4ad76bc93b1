internal import CLibcrypto
internal import CPKCS11

/// An ECDSA P-256 private key: signs ES256, reads and writes (encrypted) PKCS#8 PEM. Or a key
/// in a PKCS#11 token (SPEC §5.7, ``PKCS11Token``), which signs the same ES256 signatures
/// with `CKM_ECDSA` over the SHA-256 digest and cannot be written anywhere.
///
/// `@unchecked Sendable` is safe: the `EVP_PKEY` is never mutated after `init`, OpenSSL 3
/// allows concurrent read-only use of one `EVP_PKEY`, and every signature uses a signing
/// context of its own (``SigningContextPool``). `publicKey` is itself immutable and Sendable;
/// a token key is a token (Sendable) and an immutable `CKA_ID`.
public final class P256PrivateKey: @unchecked Sendable {
    /// The owned `EVP_PKEY` (key pair); freed in `deinit`. Nil for a key in a token.
    private let pkey: OpaquePointer?
    /// The matching public key, derived once at load.
    public let publicKey: P256PublicKey
    /// Contexts ready for `EVP_PKEY_sign` with this key, reused across signatures.
    private let signingContexts: SigningContextPool?
    /// The token and `CKA_ID` of a key in a PKCS#11 token; nil for a key in memory.
    private let tokenKey: (token: PKCS11Token, id: [UInt8])?

    /// Where the key lives: in a PKCS#11 token (its `CKA_ID`), or in this process's memory.
    public var tokenID: [UInt8]? { tokenKey?.id }

    /// A key in `token` under `CKA_ID` `id`, whose public half is `publicKey`.
    init(token: PKCS11Token, id: [UInt8], publicKey: P256PublicKey) {
        self.pkey = nil
        self.signingContexts = nil
        self.tokenKey = (token, id)
        self.publicKey = publicKey
    }

    /// Takes ownership of `pkey`; checks it is a consistent P-256 key pair; frees it if
    /// `init` throws.
    private init(owning pkey: OpaquePointer) throws(P256KeyError) {
        do throws(P256KeyError) {
            try P256Curve.requireP256(pkey)
            try Self.requireConsistentPair(pkey)
            let (x, y) = try P256Curve.coordinates(of: pkey)
            publicKey = try P256PublicKey(x: x, y: y)
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
        self.pkey = pkey
        self.signingContexts = SigningContextPool(pkey: pkey)
        self.tokenKey = nil
    }

    deinit { if let pkey { EVP_PKEY_free(pkey) } }

    /// A new random key pair (OpenSSL's DRBG).
    public static func generate() throws(OpenSSLError) -> P256PrivateKey {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw .drain("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(ctx) }
        try check(EVP_PKEY_keygen_init(ctx), "EVP_PKEY_keygen_init")
        try check(EVP_PKEY_CTX_set_group_name(ctx, SN_X9_62_prime256v1), "EVP_PKEY_CTX_set_group_name")
        var pkey: OpaquePointer?
        try check(EVP_PKEY_generate(ctx, &pkey), "EVP_PKEY_generate")
        guard let pkey else { throw .drain("EVP_PKEY_generate") }
        do {
            return try P256PrivateKey(owning: pkey)
        } catch {
            // A freshly generated P-256 key that fails our own checks is a libcrypto failure.
            if case .openSSL(let inner) = error { throw inner }
            throw OpenSSLError(operation: "EVP_PKEY_generate", queue: [error.description])
        }
    }

    /// Reads a P-256 private key from PEM: PKCS#8 (`PRIVATE KEY`), encrypted PKCS#8
    /// (`ENCRYPTED PRIVATE KEY`, needs `passphrase`), or — for keys made with
    /// `openssl ecparam -genkey` — SEC1 `EC PRIVATE KEY`. Only the first key block is read.
    ///
    /// Never prompts on a terminal. An encrypted key without a passphrase throws
    /// `.passphraseRequired`; a wrong passphrase `.decryptionFailed`; another kind of key
    /// `.unsupportedKey`. A passphrase given for an unencrypted key is ignored.
    public convenience init(pkcs8PEM: String, passphrase: [UInt8]? = nil) throws(P256KeyError) {
        try self.init(owning: try PrivateKeyPEM.read(pkcs8PEM, passphrase: passphrase))
    }

    /// The key as PKCS#8 PEM. With a passphrase: encrypted PKCS#8
    /// (`ENCRYPTED PRIVATE KEY`, PBES2 with PBKDF2-HMAC-SHA256 and AES-256-CBC, OpenSSL's
    /// defaults); without: plain `PRIVATE KEY`. Store the result with mode 0600.
    /// A key in a token has no PEM: it throws.
    public func pkcs8PEM(passphrase: [UInt8]? = nil) throws(OpenSSLError) -> String {
        guard let pkey else {
            throw OpenSSLError(operation: "PEM_write", queue: ["the key is in a PKCS#11 token and is never exported"])
        }
        return try PrivateKeyPEM.write(pkey, passphrase: passphrase)
    }

    /// The ES256 signature of `message`: ECDSA P-256 over SHA-256, as raw r||s, exactly 64
    /// bytes (each half left-padded to 32), ready for a JWS. Always low-S (s ≤ n/2,
    /// ``ECDSALowS``), so each signature has exactly one string.
    ///
    /// A key in a token signs the SHA-256 digest with `CKM_ECDSA`, which gives r||s already;
    /// it is low-S normalized after the token, which may give either form. A token failure is
    /// an `OpenSSLError` of operation `C_Sign` naming the `CK_RV` (the caller answers 15).
    public func signatureES256(for message: some Collection<UInt8>) throws(OpenSSLError) -> [UInt8] {
        if let tokenKey {
            do {
                let raw = try tokenKey.token.sign(SHA256.hash(message), keyID: tokenKey.id, mechanism: UInt(CKM_ECDSA),
                                                  length: 2 * ECDSASignature.halfLength)
                return ECDSALowS.normalized(raw)
            } catch {
                throw OpenSSLError(operation: error.operation, queue: [error.reason])
            }
        }
        let signed = message.withContiguousStorageIfAvailable { buffer in Result { () throws(OpenSSLError) in try signDER(buffer) } }
            ?? Array(message).withUnsafeBufferPointer { buffer in Result { () throws(OpenSSLError) in try signDER(buffer) } }
        let der = try signed.get()
        if var raw = ECDSASignature.rawFromCanonicalDER(der) {
            ECDSALowS.normalize(&raw)
            return raw
        }
        do {
            return ECDSALowS.normalized(try ECDSASignature.rawFromDER(der, strict: false))
        } catch {
            throw OpenSSLError(operation: "EVP_DigestSign", queue: ["libcrypto produced an unreadable signature: \(error)"])
        }
    }

    /// The DER ECDSA signature of `message` with SHA-256.
    ///
    /// Hashes with ``SHA256`` (no context allocated) and signs the digest with `EVP_PKEY_sign`
    /// on a reused, already initialised context: the path `openssl speed ecdsap256` measures.
    /// `EVP_DigestSign` would add an `EVP_MD_CTX` and a digest fetch per signature.
    private func signDER(_ message: UnsafeBufferPointer<UInt8>) throws(OpenSSLError) -> [UInt8] {
        let digest = SHA256.hash(message)
        guard let signingContexts else { throw OpenSSLError(operation: "EVP_PKEY_sign", queue: ["no key in memory"]) }
        let ctx = try signingContexts.take()
        var der = [UInt8](repeating: 0, count: 80) // ECDSA-Sig-Value for P-256 is at most 72 bytes
        var length = der.count
        guard EVP_PKEY_sign(ctx.pointer, &der, &length, digest, digest.count) == 1 else {
            let error = OpenSSLError.drain("EVP_PKEY_sign")
            signingContexts.discard(ctx)
            throw error
        }
        signingContexts.put(ctx)
        der.removeSubrange(length...)
        return der
    }

    /// Checks that the private scalar and the public point belong together (a PKCS#8 file
    /// may carry an unrelated public key).
    private static func requireConsistentPair(_ pkey: OpaquePointer) throws(P256KeyError) {
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else {
            throw .openSSL(.drain("EVP_PKEY_CTX_new_from_pkey"))
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_pairwise_check(ctx) == 1 else {
            ERR_clear_error()
            throw .unsupportedKey("the private and public parts of the key do not match")
        }
    }
}
