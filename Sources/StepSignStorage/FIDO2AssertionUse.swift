/// What ``CredentialStore/useFIDO2Assertion(kid:signCount:nonce:expiresAt:now:)`` did.
public enum FIDO2AssertionUse: Sendable, Equatable {
    /// The nonce was unused and the counter grew (or both were 0): the answer counts.
    case accepted
    /// The nonce was used before: nothing changed.
    case nonceReused
    /// The counter did not grow past `stored`: a cloned authenticator, or a replay. The nonce
    /// is used up all the same.
    case counterDidNotGrow(stored: UInt32)
    /// No FIDO2 credential `kid` (revoked or removed meanwhile).
    case noSuchCredential
}
