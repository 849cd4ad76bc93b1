internal import CLibcrypto

/// An ECDSA P-256 public key: verifies ES256 signatures, exports as SPKI PEM and JWK.
///
/// `@unchecked Sendable` is safe: the `EVP_PKEY` is never mutated after `init`, OpenSSL 3
/// allows concurrent read-only use of one `EVP_PKEY`, and every verification makes its own
/// `EVP_MD_CTX`/`EVP_PKEY_CTX`. All other stored properties are immutable values.
public final class P256PublicKey: @unchecked Sendable {
    /// The owned `EVP_PKEY` (public part only); freed in `deinit`.
    let pkey: OpaquePointer
    /// The x coordinate, 32 bytes big-endian.
    public let x: [UInt8]
    /// The y coordinate, 32 bytes big-endian.
    public let y: [UInt8]
    /// The SubjectPublicKeyInfo in PEM (`-----BEGIN PUBLIC KEY-----`).
    public let spkiPEM: String
    /// The RFC 7638 JWK thumbprint (SHA-256, base64url): stepsign's key ID (`kid`).
    public let thumbprint: String

    /// Takes ownership of `pkey`, which must be a valid P-256 key; frees it if `init` throws.
    init(owning pkey: OpaquePointer) throws(P256KeyError) {
        do throws(P256KeyError) {
            try P256Curve.requireP256(pkey)
            (x, y) = try P256Curve.coordinates(of: pkey)
            spkiPEM = try Self.encodeSPKI(pkey)
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
        self.pkey = pkey
        thumbprint = Self.thumbprint(x: x, y: y)
    }

    deinit { EVP_PKEY_free(pkey) }

    /// Reads a SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`) holding a P-256 key.
    /// Text before and after the block is ignored; only the first block is read.
    public convenience init(spkiPEM: String) throws(P256KeyError) {
        let bio: MemoryBIO
        do { bio = try MemoryBIO(text: spkiPEM) } catch { throw .openSSL(error) }
        guard let pkey = PEM_read_bio_PUBKEY_ex(bio.pointer, nil, nil, nil, nil, nil) else {
            ERR_clear_error()
            throw .malformed("not a PEM PUBLIC KEY (SubjectPublicKeyInfo)")
        }
        do throws(P256KeyError) {
            try P256Curve.requireP256(pkey)
            try P256Curve.requireValidPublicPoint(pkey)
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
        try self.init(owning: pkey)
    }

    /// The key a JWK describes: `kty` "EC", `crv` "P-256", `x` and `y` base64url of 32 bytes
    /// each, and the point must be on the curve. `kid`, `alg` and `use` are not checked here
    /// (see `TrustedKeys` for how a JWKS's `kid` is treated).
    public convenience init(jwk: JWK) throws(P256KeyError) {
        guard jwk.kty == "EC" else { throw .unsupportedKey("kty \(jwk.kty), not EC") }
        guard jwk.crv == "P-256" else { throw .unsupportedKey("crv \(jwk.crv ?? "missing"), not P-256") }
        guard let xText = jwk.x, let x = Base64URL.decode(xText), let yText = jwk.y, let y = Base64URL.decode(yText)
        else { throw .malformed("JWK x and y must be base64url") }
        try self.init(x: x, y: y)
    }

    /// The key with public point (x, y), each coordinate exactly 32 bytes big-endian.
    public convenience init(x: [UInt8], y: [UInt8]) throws(P256KeyError) {
        try self.init(owning: try P256Curve.makePublicKey(x: x, y: y))
    }

    /// The public JWK: `kty`, `crv`, `x`, `y`, plus `kid` (the thumbprint), `alg` ES256 and
    /// `use` sig.
    public var jwk: JWK {
        JWK(kty: "EC", crv: "P-256", x: Base64URL.encode(x), y: Base64URL.encode(y),
            kid: thumbprint, alg: "ES256", use: "sig")
    }

    /// True when `rawSignature` (64-byte r||s) is a valid ES256 signature of `message`
    /// (SHA-256, ECDSA P-256). Any other length, and any failure, is false. High-S
    /// signatures are accepted, as RFC 7518 does.
    public func isValidSignatureES256(_ rawSignature: [UInt8], for message: some Collection<UInt8>) -> Bool {
        guard rawSignature.count == 2 * ECDSASignature.halfLength,
              let der = try? ECDSASignature.derFromRaw(rawSignature)
        else { return false }
        return message.withContiguousStorageIfAvailable { verify(der: der, message: $0) }
            ?? Array(message).withUnsafeBufferPointer { verify(der: der, message: $0) }
    }

    private func verify(der: [UInt8], message: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let ctx = EVP_MD_CTX_new() else {
            ERR_clear_error()
            return false
        }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, SHA256.algorithm, nil, pkey) == 1 else {
            ERR_clear_error()
            return false
        }
        let result = EVP_DigestVerify(ctx, der, der.count, message.baseAddress, message.count)
        // 0 is "signature does not verify", < 0 an error; both are "not valid", and the
        // queue must not leak into the next libcrypto call on this thread.
        if result != 1 { ERR_clear_error() }
        return result == 1
    }

    /// RFC 7638 thumbprint: SHA-256 of `{"crv":"P-256","kty":"EC","x":…,"y":…}` (members in
    /// lexicographic order, no whitespace), base64url.
    static func thumbprint(x: [UInt8], y: [UInt8]) -> String {
        let canonical = #"{"crv":"P-256","kty":"EC","x":""# + Base64URL.encode(x) + #"","y":""# + Base64URL.encode(y) + #""}"#
        return Base64URL.encode(SHA256.hash(Array(canonical.utf8)))
    }

    private static func encodeSPKI(_ pkey: OpaquePointer) throws(P256KeyError) -> String {
        do {
            let bio = try MemoryBIO()
            try check(PEM_write_bio_PUBKEY(bio.pointer, pkey), "PEM_write_bio_PUBKEY")
            return bio.text()
        } catch {
            throw .openSSL(error)
        }
    }
}
