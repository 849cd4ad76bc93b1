import Foundation

/// A JSON Web Key (RFC 7517), with the members stepsign uses for EC P-256 keys.
///
/// Decoding ignores members not listed here (e.g. an RSA key's `n` and `e`), so a JWKS that
/// mixes key types still decodes; encoding omits members that are nil.
public struct JWK: Codable, Sendable, Equatable {
    /// Key type: "EC" for stepsign's keys.
    public var kty: String
    /// Curve: "P-256".
    public var crv: String?
    /// x coordinate, base64url of 32 bytes.
    public var x: String?
    /// y coordinate, base64url of 32 bytes.
    public var y: String?
    /// Key ID; stepsign's own keys use their RFC 7638 thumbprint.
    public var kid: String?
    /// Intended algorithm: "ES256".
    public var alg: String?
    /// Intended use: "sig".
    public var use: String?
    /// stepsign's `stepsign_revoked_at` (SPEC §5.4): the log index at which the key was
    /// revoked; its signatures at lower indexes stay valid, later ones are not.
    public var revokedAt: Int64?

    private enum CodingKeys: String, CodingKey {
        case kty, crv, x, y, kid, alg, use
        case revokedAt = "stepsign_revoked_at"
    }

    /// A JWK with the given members.
    public init(kty: String, crv: String? = nil, x: String? = nil, y: String? = nil,
                kid: String? = nil, alg: String? = nil, use: String? = nil) {
        self.kty = kty
        self.crv = crv
        self.x = x
        self.y = y
        self.kid = kid
        self.alg = alg
        self.use = use
    }
}

extension P256PublicKey {
    /// The key a JWK's JSON text describes (RFC 7517), as ``init(jwk:)`` checks it.
    public convenience init(jwkJSON: some Collection<UInt8>) throws(P256KeyError) {
        let jwk: JWK
        do {
            jwk = try JSONDecoder().decode(JWK.self, from: Data(jwkJSON))
        } catch {
            throw .malformed("not a JWK: \(error)")
        }
        try self.init(jwk: jwk)
    }

    /// The public ``jwk`` as JSON text, as a device key is stored.
    public var jwkJSON: String {
        // Encoding a struct of strings cannot fail.
        String(decoding: (try? JSONEncoder().encode(jwk)) ?? Data(), as: UTF8.self)
    }
}
