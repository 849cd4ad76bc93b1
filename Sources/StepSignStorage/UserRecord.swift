import Foundation

/// A stored user: password hash, password state and the attempt counters (SPEC §2, §4).
public struct UserRecord: Sendable, Equatable {
    /// The user ID; case-sensitive.
    public var name: String
    /// The scrypt hash string of the current password.
    public var passwordHash: String
    /// When the current password was set (for the maximum password age).
    public var passwordChangedAt: Date
    /// An admin forced the password to count as expired.
    public var passwordExpired: Bool
    /// The user must choose a new password at the next login.
    public var mustChangePassword: Bool
    /// Attempts taken since the last success or unlock: failures, and attempts reserved by
    /// answers still being checked (``AttemptCounter/failedAttempts``).
    public var failedAttempts: Int
    /// The user was blocked after too many failed attempts.
    public var blocked: Bool
    /// When a temporary block ends; nil while blocked means until an admin unlocks.
    public var blockedUntil: Date?
    /// When the user was added.
    public var createdAt: Date
    /// Changes whenever no existing login of the user may go on (``CredentialToken``).
    public var credentialToken: CredentialToken
    /// Why the record failed its seal check when it was read (SPEC §5.4), or nil when it is
    /// sealed and current. A record that failed is never used: the user counts as blocked.
    public var sealFailure: SealFailure?

    public init(
        name: String,
        passwordHash: String,
        passwordChangedAt: Date,
        passwordExpired: Bool,
        mustChangePassword: Bool,
        failedAttempts: Int,
        blocked: Bool,
        blockedUntil: Date?,
        createdAt: Date,
        credentialToken: CredentialToken = CredentialToken(bytes: Data()),
        sealFailure: SealFailure? = nil
    ) {
        self.name = name
        self.passwordHash = passwordHash
        self.passwordChangedAt = passwordChangedAt
        self.passwordExpired = passwordExpired
        self.mustChangePassword = mustChangePassword
        self.failedAttempts = failedAttempts
        self.blocked = blocked
        self.blockedUntil = blockedUntil
        self.createdAt = createdAt
        self.credentialToken = credentialToken
        self.sealFailure = sealFailure
    }

    /// The user's attempt counter.
    public var counter: AttemptCounter {
        AttemptCounter(failedAttempts: failedAttempts, blocked: blocked, blockedUntil: blockedUntil,
                       sealFailure: sealFailure)
    }

    /// Whether the user is blocked at `now`: blocked with no end, or with an end after `now`,
    /// or the record failed its seal check.
    public func isBlocked(at now: Date) -> Bool {
        counter.isBlocked(at: now)
    }

    /// The attempts the user has left at `now` out of `maxAttempts`: 0 while blocked, the
    /// full number once a temporary block has ended.
    public func attemptsLeft(maxAttempts: Int, at now: Date) -> Int {
        counter.attemptsLeft(maxAttempts: maxAttempts, at: now)
    }
}
