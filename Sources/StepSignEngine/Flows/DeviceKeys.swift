import Foundation
import Logging
import StepSignConfig
import StepSignCrypto
import StepSignStorage

/// The users' LDA device keys as the flows use them: which may answer now, a fresh challenge
/// for them, and whether a signature answers it. Reads the store; changes nothing.
struct DeviceKeys: Sendable {
    let store: any CredentialStore
    let logger: Logger

    /// The IDs of the user's device keys that may answer challenges now (none when LDA is off).
    ///
    /// Only the IDs: a key was checked as a P-256 JWK when it was enrolled, and is decoded only
    /// when a signature by it is checked (``isValidSignature(_:kid:challenge:user:config:)``),
    /// one key per answer.
    func activeIDs(user: String, config: StepSignConfiguration) async throws -> [String] {
        guard config.lda.enabled else { return [] }
        return try await store.deviceKeys(user: user, includeRevoked: false).map(\.kid).sorted()
    }

    /// The active device key `kid` of `user`, decoded; nil if there is none (or LDA is off).
    private func activeKey(user: String, kid: String, config: StepSignConfiguration) async throws -> P256PublicKey? {
        guard config.lda.enabled,
              let record = try await store.deviceKeys(user: user, includeRevoked: false).first(where: { $0.kid == kid })
        else { return nil }
        // A security key signs only authenticatorData and a hash (SPEC §5.7): a plain signature
        // "by" it would be made outside the key, so it never answers as a plain device key.
        guard try await store.fido2Credential(kid: kid) == nil else { return nil }
        guard let key = try? P256PublicKey(jwkJSON: Array(record.publicKeyJWK.utf8)) else {
            logger.error("unreadable device key in the store", metadata: ["user": "\(user)", "kid": "\(kid)"])
            return nil
        }
        return key
    }

    /// A fresh device challenge for `subject`, or nil if its user has no usable device key.
    // Not inlined nor optimized: inlined into its async callers, it crashes the Swift 6.3.1
    // optimizer in release builds (signal 11 while splitting the caller's coroutine).
    @_optimize(none)
    func challenge(for subject: StepUpSubject, peer: Peer, config: StepSignConfiguration) async throws -> DeviceChallenge? {
        let keyIDs = try await activeIDs(user: subject.user, config: config)
        guard !keyIDs.isEmpty else { return nil }
        let nonce = Base64URL.encode(try SecureRandom.bytes(count: 16))
        return DeviceChallenge(nonce: nonce, bytes: subject.deviceChallengeText(nonce: nonce, peer: peer), deviceKeyIDs: keyIDs)
    }

    /// Whether `signature` (base64url r||s) by enrolled key `kid` is over exactly `challenge`.
    func isValidSignature(_ signature: String, kid: String, challenge: DeviceChallenge, user: String,
                          config: StepSignConfiguration) async throws -> Bool {
        guard challenge.deviceKeyIDs.contains(kid),
              let key = try await activeKey(user: user, kid: kid, config: config),
              let raw = Base64URL.decode(signature)
        else { return false }
        return key.isValidSignatureES256(raw, for: challenge.bytes)
    }

    /// Whether device key `kid` is a FIDO2 security key.
    func isFIDO2(kid: String) async throws -> Bool {
        try await store.fido2Credential(kid: kid) != nil
    }

    /// Checks a FIDO2 assertion (SPEC §5.7) by security key `kid` of `user` over `challenge`:
    /// the ES256 signature (DER, as the authenticator gives it) over authenticatorData ‖
    /// SHA-256(challenge bytes), the RP ID hash against `[lda] fido2_rp_id`, and the UP and UV
    /// flags; then consumes it in one store transaction: the nonce used once and the signature
    /// counter raised, which must grow. Returns nil when it answers, else why not (for the log;
    /// no secret in it). A counter that does not grow is logged at critical: the key may have
    /// been cloned.
    func fido2AssertionProblem(signature: String, authenticatorData: String, kid: String, challenge: DeviceChallenge,
                               user: String, config: StepSignConfiguration, expiresAt: Date, now: Date) async throws -> String? {
        guard challenge.deviceKeyIDs.contains(kid) else { return "key \(kid) is not one the challenge named" }
        guard config.lda.enabled,
              let record = try await store.deviceKeys(user: user, includeRevoked: false).first(where: { $0.kid == kid }),
              let key = try? P256PublicKey(jwkJSON: Array(record.publicKeyJWK.utf8))
        else { return "no usable security key \(kid)" }
        guard let data = Base64URL.decode(authenticatorData), let parsed = FIDO2AuthenticatorData(data) else {
            return "authenticatorData of key \(kid) is malformed"
        }
        guard let der = Base64URL.decode(signature), let raw = try? ECDSASignature.rawFromDER(der) else {
            return "signature of key \(kid) is not a DER ECDSA signature"
        }
        guard key.isValidSignatureES256(raw, for: data + SHA256.hash(challenge.bytes)) else {
            return "FIDO2 signature of key \(kid) does not verify"
        }
        guard ConstantTime.equals(parsed.rpIDHash, SHA256.hash(Array(config.lda.fido2RPID.utf8))) else {
            return "FIDO2 assertion of key \(kid) is for another relying party"
        }
        guard parsed.isUserPresent else { return "FIDO2 assertion of key \(kid) lacks user presence (UP)" }
        guard parsed.isUserVerified else { return "FIDO2 assertion of key \(kid) lacks user verification (UV)" }
        switch try await store.useFIDO2Assertion(kid: kid, signCount: parsed.signCount, nonce: "lda-nonce:" + challenge.nonce,
                                                 expiresAt: expiresAt, now: now) {
        case .accepted:
            return nil
        case .nonceReused:
            return "FIDO2 assertion of key \(kid) answers a challenge already answered"
        case let .counterDidNotGrow(stored):
            logger.critical("FIDO2 signature counter did not grow: possible clone of the security key (SPEC 5.7)",
                            metadata: ["user": "\(user)", "kid": "\(kid)", "stored": "\(stored)",
                                       "received": "\(parsed.signCount)"])
            return "FIDO2 signature counter of key \(kid) did not grow"
        case .noSuchCredential:
            return "security key \(kid) was revoked meanwhile"
        }
    }
}
