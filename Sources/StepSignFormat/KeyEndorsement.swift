#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import StepSignCrypto
import StepSignProtocol

/// An endorsement of a daemon's signing key (SPEC §5.4): a compact JWS, header
/// `{"alg":"ES256","kid","typ":"stepsign-key-endorsement+jwt"}`, with these claims.
///
/// The operator's cluster root key endorses an instance's first key (`stepsign admin cluster
/// endorse`); a daemon endorses its own successor when it rotates, with its current key. A
/// daemon trusts another instance's key only through a chain of endorsements that ends at the
/// root named in its configuration, so a key row written into the database by hand is never
/// trusted: its writer holds neither the root nor an endorsed key.
public struct KeyEndorsement: Codable, Sendable, Equatable {
    /// The `typ` header value of every endorsement.
    public static let headerType = "stepsign-key-endorsement+jwt"

    /// The instance that holds the endorsed key's private half.
    public var instance: String
    /// The endorsed key's thumbprint.
    public var kid: String
    /// The endorsed public key (`kty`, `crv`, `x`, `y`).
    public var jwk: JWK
    /// When the endorsement was made, Unix seconds.
    public var iat: Int64

    /// An endorsement of `key`, held by `instance`, made at `iat`.
    public init(instance: String, key: P256PublicKey, iat: Int64) {
        self.instance = instance
        self.kid = key.thumbprint
        self.jwk = JWK(kty: "EC", crv: "P-256", x: key.jwk.x, y: key.jwk.y)
        self.iat = iat
    }

    /// The claims as compact JSON, members in the order of SPEC §5.4.
    public var jsonBytes: [UInt8] {
        var writer = JSONWriter(capacity: 256 + instance.utf8.count)
        writer.beginObject()
        writer.member("instance", instance)
        writer.member("kid", kid)
        writer.key("jwk")
        writer.beginObject()
        writer.member("kty", jwk.kty)
        writer.member("crv", jwk.crv ?? "")
        writer.member("x", jwk.x ?? "")
        writer.member("y", jwk.y ?? "")
        writer.endObject()
        writer.member("iat", iat)
        writer.endObject()
        return writer.bytes
    }

    /// Signs this endorsement with `key` (the cluster root, or the endorsed key's predecessor).
    public func signed(by key: P256PrivateKey) throws(OpenSSLError) -> String {
        try JWS.signES256(headerJSON: ES256Header.json(kid: key.publicKey.thumbprint, typ: Self.headerType),
                          payload: jsonBytes, key: key)
    }

    /// The endorsed public key, checked against the endorsed `kid`.
    public func publicKey() throws(SignatureVerificationError) -> P256PublicKey {
        let key: P256PublicKey
        do {
            key = try P256PublicKey(jwk: jwk)
        } catch {
            throw .malformedClaims("jwk: \(error)")
        }
        guard key.thumbprint == kid else { throw .malformedClaims("the jwk's thumbprint is not the endorsed kid") }
        return key
    }

    /// The endorsement in `compact` and the kid of the key that signed it, once it is proven to
    /// be one signed by a key of `endorsers`: the rules of ``StepSignSignature`` (ES256, low-S,
    /// no duplicate members), `typ` stepsign-key-endorsement+jwt, and a `jwk` whose thumbprint
    /// is the endorsed `kid`.
    public static func verify(_ compact: String,
                              endorsers: TrustedKeys) throws(SignatureVerificationError) -> (endorsement: KeyEndorsement, endorserKid: String) {
        let (jws, kid) = try StepSignSignature.verifiedPayload(compact, type: headerType, trustedKeys: endorsers)
        let endorsement = try StepSignSignature.decodeStrictly(KeyEndorsement.self, from: jws.payload)
        _ = try endorsement.publicKey()
        return (endorsement, kid)
    }

    /// The kid named in the header of `compact` (the endorser), without checking anything else.
    public static func endorserKid(_ compact: String) -> String? {
        (try? JWS.parse(compact))?.header.kid
    }
}
