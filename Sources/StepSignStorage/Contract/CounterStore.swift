import Foundation

/// The counters a guess must get past, kept where every connection and every daemon on the
/// store sees them (SPEC §5.1): attempts reserved before an answer is checked
/// (``AttemptCounter`` is the one rule both stores keep) and single-use values.
public protocol CounterStore: Sendable {
    // MARK: Attempts

    /// The attempt counter of `name` at `now`: a user's, or that of a name that is not a user
    /// (kept alike, so that replies and timing do not tell the two apart). A name never seen
    /// has a fresh counter.
    func attemptCounter(name: String, now: Date) async throws -> AttemptCounter

    /// Takes one attempt from the counter of `name` *before* its answer is checked, in one
    /// atomic step (SPEC §5.1: reserve, then check).
    ///
    /// A temporary block that ended before `now` is lifted first. A blocked name gets
    /// ``AttemptReservation/denied(blockedUntil:)`` and nothing changes. Otherwise the attempt
    /// counts as a failure at once; the one that reaches `maxAttempts` blocks the name, until
    /// `now + blockSeconds`, or until an admin unlocks when `blockSeconds` is 0, and gives a
    /// user a new ``CredentialToken`` in the same step (the user's logins end). So with
    /// `maxAttempts` N, at most N answers are ever checked between two successes, however
    /// many arrive at once, and an answer in flight when the daemon dies stays counted.
    /// Names that are not users are counted in the store too (under a keyed hash of the
    /// name, pruned when idle past a day or `blockSeconds`).
    func reserveAttempt(name: String, maxAttempts: Int, blockSeconds: Int, now: Date) async throws -> AttemptReservation

    /// A right answer gives its reserved attempt back: the counter starts over and the block
    /// the reservations led to is lifted.
    func giveBackAttempt(name: String, now: Date) async throws

    // MARK: Single use

    /// Marks `value` (a nonce, an assertion ID) used until `expiresAt`; true only for the
    /// first use, atomically across connections (SPEC §5.1). Values that expired before
    /// `now` are forgotten.
    func useOnce(_ value: String, expiresAt: Date, now: Date) async throws -> Bool
}
