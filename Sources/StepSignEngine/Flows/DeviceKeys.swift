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
}
