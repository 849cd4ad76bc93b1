import Foundation

/// What ``CounterStore/reserveAttempt(_:name:maxAttempts:blockSeconds:now:)`` gave an answer
/// that is about to be checked (SPEC §5.1, "reserve, then check"), and what
/// ``CounterStore/reserveActivationAttempt(name:maxAttempts:now:)`` gave an activation code.
public enum AttemptReservation: Sendable, Equatable {
    /// One attempt is taken and counts as a failure until the answer is settled: given back if
    /// right, spent if wrong. `attemptsLeft` are left if this answer and every other one in
    /// flight prove wrong. (For an activation code, where nothing is settled: left if this
    /// code is wrong; 0 means this was the last one.)
    case granted(attemptsLeft: Int)
    /// Every attempt left is held by answers still being checked, here or on another daemon:
    /// nothing is taken, and the answer is not checked yet. It waits for them to settle and
    /// asks again (SPEC §5.1: a right answer is never refused only because others were in
    /// flight).
    case inFlight
    /// No attempt is left: the name is blocked until `blockedUntil` (nil: until an admin
    /// unlocks). The answer must not be checked, however right it may be.
    case denied(blockedUntil: Date?)
    /// The name's record failed its seal check (SPEC §5.4): answered as for a blocked user,
    /// nothing changes, and the answer must not be checked.
    case unsealed(SealFailure)

    /// How long a reservation holds its attempt in flight before it counts as a settled
    /// failure: longer than any check takes (a wait for a worker, scrypt), short enough that
    /// the reservations of a daemon killed mid-check do not make answers wait for long.
    public static let lifetime: TimeInterval = 120
}
