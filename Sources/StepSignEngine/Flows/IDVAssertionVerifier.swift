import Foundation
import StepSignProtocol
import StepSignCrypto

/// Checks an IDV server's biometric assertion (SPEC §3.2, `setIDVBiometricAssertion`).
///
/// An assertion is a compact JWS signed ES256 by a key of `idv.trusted_keys`, with claims
/// `iss` = `idv.issuer`, `sub` = the user, `nonce` = the open challenge's nonce, `txn` =
/// base64url(SHA-256(the challenge's operation text)), so that the assertion approves the
/// operation the IDV server showed and no other (``IDVChallengeText``), `iat` and
/// `exp` (Unix seconds) fresh within `idv.max_age_seconds` allowing 60 s of clock skew, and
/// `"result": "match"`. Each assertion is accepted once: the engine marks the hash of its
/// signing input used in the store (``StepSignStore/useOnce(_:expiresAt:now:)``) until it
/// could no longer be fresh (the signing input, not the signature, because an ECDSA signature
/// can be re-shaped without the key), so a replay fails on any connection or daemon.
final class IDVAssertionVerifier: Sendable {
    /// Why an assertion was refused (logged; the client sees status 102).
    enum Rejection: String, Error, Sendable {
        case malformed, algorithmNotAllowed, unknownKey, badSignature, wrongIssuer, wrongSubject, wrongNonce
        /// `txn` is missing or is not the hash of this challenge's operation text: the
        /// assertion is for another payload, reason, requester or user.
        case wrongOperation
        case missingTimes, expired, notYetValid, tooOld, notAMatch, replayed, unknownUser
    }

    /// Clock skew allowed between the IDV server and this host.
    static let clockSkew: TimeInterval = 60

    /// The claims stepsign reads from an assertion, read with the protocol's strict parser (a
    /// member named twice is refused, never read as whichever copy a decoder keeps). A claim
    /// that is absent or null is nil; one of the wrong type makes the assertion malformed.
    private struct Claims {
        var iss: String?
        var sub: String?
        var nonce: String?
        var txn: String?
        var iat: Double?
        var exp: Double?
        var result: String?

        init(payload: [UInt8]) throws(Rejection) {
            guard let object = try? JSONParser.parse(payload), object.members != nil else { throw .malformed }
            func claim<T>(_ name: String, _ read: (JSONValue) -> T?) throws(Rejection) -> T? {
                guard let value = object[name], !value.isNull else { return nil }
                guard let read = read(value) else { throw .malformed }
                return read
            }
            iss = try claim("iss", \.stringValue)
            sub = try claim("sub", \.stringValue)
            nonce = try claim("nonce", \.stringValue)
            txn = try claim("txn", \.stringValue)
            iat = try claim("iat", \.doubleValue)
            exp = try claim("exp", \.doubleValue)
            result = try claim("result", \.stringValue)
        }
    }

    /// What marks an accepted assertion used: `value` for the store, kept until `expiresAt`.
    struct SingleUse: Sendable, Equatable {
        var value: String
        var expiresAt: Date
    }

    /// Checks `assertion` for `user` and `challenge` (its nonce and operation text); on
    /// success returns what the caller must mark used (and refuse as `replayed` if it already was).
    func verify(_ assertion: String, issuer: String, keys: TrustedKeys, maxAgeSeconds: Int, user: String,
                challenge: IDVChallenge, now: Date) throws(Rejection) -> SingleUse {
        let nonce = challenge.nonce
        guard let jws = try? JWS.parse(assertion) else { throw .malformed }
        guard jws.header.alg == "ES256", jws.header.crit == nil else { throw .algorithmNotAllowed }
        let candidates = jws.header.kid.map { kid in keys.key(kid: kid).map { [$0] } ?? [] } ?? keys.all
        guard !candidates.isEmpty else { throw .unknownKey }
        guard candidates.contains(where: { jws.isValidES256(key: $0) }) else { throw .badSignature }
        let claims = try Claims(payload: jws.payload)
        guard claims.iss == issuer else { throw .wrongIssuer }
        guard claims.sub == user else { throw .wrongSubject }
        guard let claimed = claims.nonce, ConstantTime.equals(Array(claimed.utf8), Array(nonce.utf8)) else { throw .wrongNonce }
        let txn = IDVChallengeText.txn(of: challenge.text)
        guard let bound = claims.txn, ConstantTime.equals(Array(bound.utf8), Array(txn.utf8)) else { throw .wrongOperation }
        guard let iat = claims.iat, let exp = claims.exp else { throw .missingTimes }
        let clock = now.timeIntervalSince1970
        guard exp >= clock - Self.clockSkew else { throw .expired }
        guard iat <= clock + Self.clockSkew else { throw .notYetValid }
        guard iat >= clock - Double(maxAgeSeconds) - Self.clockSkew else { throw .tooOld }
        guard claims.result == "match" else { throw .notAMatch }
        let fingerprint = SHA256.hash(jws.signingInput)
        let forgetAfter = Date(timeIntervalSince1970: max(exp, iat + Double(maxAgeSeconds)) + Self.clockSkew)
        return SingleUse(value: "idv-assertion:" + Hex.encode(fingerprint), expiresAt: forgetAfter)
    }
}
