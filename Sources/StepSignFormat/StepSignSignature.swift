#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import StepSignProtocol
import StepSignCrypto

/// stepsign's signature: a compact JWS, ES256, header
/// `{"alg":"ES256","kid":<kid>,"typ":"stepsign+jwt"}`, payload the `SignatureClaims` JSON.
public enum StepSignSignature {
    /// The `typ` header value of every stepsign signature.
    public static let headerType = "stepsign+jwt"

    /// The protected header JSON, members in the fixed order alg, kid, typ.
    public static func headerJSON(kid: String) -> [UInt8] {
        ES256Header.json(kid: kid, typ: headerType)
    }

    /// Signs `claims` with `key`, naming the key `kid` (its thumbprint).
    public static func make(claims: SignatureClaims, key: P256PrivateKey, kid: String) throws(OpenSSLError) -> String {
        try JWS.signES256(headerJSON: headerJSON(kid: kid), payload: claims.jsonBytes, key: key)
    }

    /// The claims of `compact` once it is proven to be a stepsign signature by a trusted key.
    ///
    /// Checks, in order: compact JWS form (else `.badInput`), no duplicate header member,
    /// `alg` ES256, no `crit`, `typ` stepsign+jwt, a `kid` that `trustedKeys` knows, the
    /// signature, low-S, and only then decodes the claims (never trusting unsigned bytes),
    /// refusing duplicate members there too.
    ///
    /// A key `trustedKeys` lists as revoked at log index R (SPEC §5.4, `stepsign_revoked_at`)
    /// verifies only a signature whose `logIndex` (proven by the caller, e.g. by an inclusion
    /// proof) is below R.
    public static func verify(_ compact: String, trustedKeys: TrustedKeys,
                              logIndex: Int64? = nil) throws(SignatureVerificationError) -> SignatureClaims {
        let (jws, kid) = try verifiedPayload(compact, type: headerType, trustedKeys: trustedKeys)
        if let key = trustedKeys.key(kid: kid), let revokedAt = trustedKeys.revocationIndex(of: key) {
            guard let logIndex, logIndex < revokedAt else {
                throw .revokedKey(kid: kid, revokedAt: revokedAt, logIndex: logIndex)
            }
        }
        return try decodeStrictly(SignatureClaims.self, from: jws.payload)
    }

    /// The parsed JWS and its `kid` once `compact` is an ES256 JWS of type `type`, signed
    /// (low-S, unless `requireLowS` is false) by the key `trustedKeys` has under its `kid`; the
    /// payload is not read.
    static func verifiedPayload(_ compact: String, type: String, trustedKeys: TrustedKeys,
                                requireLowS: Bool = true) throws(SignatureVerificationError) -> (jws: CompactJWS, kid: String) {
        let jws: CompactJWS
        do {
            jws = try JWS.parse(compact)
        } catch .duplicateHeaderMember(let name) {
            throw .duplicateMember(name)
        } catch {
            throw .badInput(error.description)
        }
        guard jws.header.alg == "ES256" else { throw .algorithmNotAllowed(jws.header.alg) }
        guard jws.header.crit == nil else { throw .criticalHeaderNotSupported }
        guard jws.header.typ == type else { throw .wrongType(jws.header.typ) }
        guard let kid = jws.header.kid else { throw .missingKeyID }
        guard let key = trustedKeys.key(kid: kid) else { throw .unknownKeyID(kid) }
        guard jws.isValidES256(key: key) else { throw .badSignature }
        guard !requireLowS || ECDSALowS.isLowS(jws.signature) else { throw .highS }
        return (jws, kid)
    }

    /// Decodes signed JSON after the strict ``JSONParser`` has read it (no duplicate member, valid
    /// UTF-8, no lone surrogate): Foundation's decoder alone would keep one of two equal members.
    static func decodeStrictly<T: Decodable>(_ type: T.Type, from payload: [UInt8]) throws(SignatureVerificationError) -> T {
        do {
            _ = try JSONParser.parse(payload)
        } catch {
            if let name = error.duplicateMember { throw .duplicateMember(name) }
            throw .malformedClaims(error.description)
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(payload))
        } catch {
            throw .malformedClaims("\(error)")
        }
    }
}
