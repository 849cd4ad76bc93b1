import Foundation

/// A user's open activation code for forgot-password (SPEC §2): stored hashed, single use,
/// with a time to live. A user has at most one.
public struct ActivationCodeRecord: Sendable, Equatable {
    /// The user the code was sent to.
    public var user: String
    /// The hash of the code; the code itself is never stored.
    public var codeHash: String
    /// The verification key shown to the user next to the code prompt.
    public var verificationKey: String
    /// When the code stops being accepted.
    public var expiresAt: Date
    /// Wrong codes entered so far.
    public var failedAttempts: Int

    public init(user: String, codeHash: String, verificationKey: String, expiresAt: Date, failedAttempts: Int = 0) {
        self.user = user
        self.codeHash = codeHash
        self.verificationKey = verificationKey
        self.expiresAt = expiresAt
        self.failedAttempts = failedAttempts
    }
}
