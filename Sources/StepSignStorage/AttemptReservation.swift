import Foundation

/// What ``StepSignStore/reserveAttempt(name:maxAttempts:blockSeconds:now:)`` gave an answer
/// that is about to be checked (SPEC §5.1, "reserve, then check").
public enum AttemptReservation: Sendable, Equatable {
    /// One attempt is taken and counts as a failure until a right answer gives it back.
    /// `attemptsLeft` are left if this answer proves wrong; 0 means this was the last one and
    /// the name is blocked already (a right answer lifts that block).
    case granted(attemptsLeft: Int)
    /// No attempt is left: the name is blocked until `blockedUntil` (nil: until an admin
    /// unlocks). The answer must not be checked, however right it may be.
    case denied(blockedUntil: Date?)
    /// The name's record failed its seal check (SPEC §5.4): answered as for a blocked user,
    /// nothing changes, and the answer must not be checked.
    case unsealed(SealFailure)
}
