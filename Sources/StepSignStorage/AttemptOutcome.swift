import Foundation

/// The result of ``StepSignStore/recordFailedAttempt(user:maxAttempts:blockSeconds:now:)``.
public struct AttemptOutcome: Sendable, Equatable {
    /// Failed attempts counted so far, including this one.
    public var failedAttempts: Int
    /// Attempts left before the user is blocked; 0 when blocked.
    public var attemptsLeft: Int
    /// The user is blocked now (by this attempt or an earlier one).
    public var blocked: Bool
    /// When the block ends; nil when not blocked or blocked until an admin unlocks.
    public var blockedUntil: Date?

    public init(failedAttempts: Int, attemptsLeft: Int, blocked: Bool, blockedUntil: Date?) {
        self.failedAttempts = failedAttempts
        self.attemptsLeft = attemptsLeft
        self.blocked = blocked
        self.blockedUntil = blockedUntil
    }
}
