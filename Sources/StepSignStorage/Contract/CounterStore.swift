import Foundation

/// The counters a guess must get past, kept where every connection and every daemon on the
/// store sees them (SPEC §5.1): attempts reserved before an answer is checked
/// (``AttemptCounter`` is the one rule both stores keep) and single-use values.
public protocol CounterStore: Sendable {
    // MARK: Attempts

    /// The attempt counter of `name` at `now`: a user's, or that of a name that is not a user
    /// (kept alike, so that replies and timing do not tell the two apart), with the answers
    /// in flight at `now` counted in ``AttemptCounter/inFlight``. A name never seen has a
    /// fresh counter.
    func attemptCounter(name: String, now: Date) async throws -> AttemptCounter

    /// Takes one attempt from the counter of `name` *before* its answer is checked, in one
    /// atomic step (SPEC §5.1: reserve, then check), and records it as in flight under `id`
    /// until `now` + ``AttemptReservation/lifetime``.
    ///
    /// A temporary block that ended before `now` is lifted first. A blocked name gets
    /// ``AttemptReservation/denied(blockedUntil:)`` and nothing changes; so does a name whose
    /// settled failures alone reach `maxAttempts` (reservations that expired, a lowered
    /// `max_attempts`), which is blocked from now. When the attempts left are all held by
    /// reservations still in flight, the answer gets ``AttemptReservation/inFlight`` and
    /// nothing is taken: it waits for them and asks again. Otherwise the attempt counts as
    /// taken at once. So with `maxAttempts` N, settled failures
    /// plus reservations in flight never exceed N, and at most N wrong answers are ever checked
    /// between two successes, however many arrive at once on however many daemons.
    ///
    /// A reservation never settled (its daemon died mid-check) holds its attempt until it
    /// expires and then counts as a failure. Names that are not users are counted in the store
    /// too (under a keyed hash of the name, pruned when idle past a day or `blockSeconds`).
    func reserveAttempt(_ id: ReservationID, name: String, maxAttempts: Int, blockSeconds: Int, now: Date) async throws
        -> AttemptReservation

    /// A right answer gives its reserved attempt `id` back: the counter starts over (only the
    /// answers still in flight stay taken), reservations that expired are dropped, and any
    /// block is lifted.
    func giveBackAttempt(_ id: ReservationID, name: String, now: Date) async throws

    /// A wrong answer settles its reserved attempt `id` as a failure. The failure that makes
    /// the settled failures reach `maxAttempts` blocks the name, until `now + blockSeconds`,
    /// or until an admin unlocks when `blockSeconds` is 0, and gives a user a new
    /// ``CredentialToken`` in the same step (the user's logins end).
    func spendAttempt(_ id: ReservationID, name: String, maxAttempts: Int, blockSeconds: Int, now: Date) async throws
        -> SpentAttempt

    // MARK: Single use

    /// Marks `value` (a nonce, an assertion ID) used until `expiresAt`; true only for the
    /// first use, atomically across connections (SPEC §5.1). Values that expired before
    /// `now` are forgotten.
    func useOnce(_ value: String, expiresAt: Date, now: Date) async throws -> Bool
}
