import Foundation

/// The attempt counter of a name, user or not (SPEC §4, §5.1): attempts taken since the last
/// success or unlock, how many of them are answers still being checked, and the block they
/// led to.
///
/// The store keeps `failedAttempts` (every attempt taken: the failures and the reservations
/// of answers still in flight) and one row per reservation with its expiry; `inFlight` is the
/// count of those rows that have not expired. So an answer whose check never ends (its daemon
/// was killed) counts as a failure once its reservation expires, without any write, and the
/// rules below tell "no attempt left" (settled failures) from "every attempt left is held by
/// checks still running" (wait for them).
public struct AttemptCounter: Sendable, Equatable {
    /// Attempts taken since the last success or unlock: settled failures plus the attempts
    /// reserved by answers still being checked (a reserved attempt counts until it is given
    /// back).
    public var failedAttempts: Int
    /// How many of `failedAttempts` are reservations of answers still being checked (not
    /// expired): 0 in a record read without them (``UserRecord/counter``).
    public var inFlight: Int
    /// The name was blocked after too many attempts.
    public var blocked: Bool
    /// When a temporary block ends; nil while blocked means until an admin unlocks.
    public var blockedUntil: Date?
    /// The user's record failed its seal check (SPEC §5.4): the name counts as blocked, for
    /// good, whatever the counter says, and no attempt is ever taken.
    public var sealFailure: SealFailure?

    public init(failedAttempts: Int = 0, inFlight: Int = 0, blocked: Bool = false, blockedUntil: Date? = nil,
                sealFailure: SealFailure? = nil) {
        self.failedAttempts = failedAttempts
        self.inFlight = inFlight
        self.blocked = blocked
        self.blockedUntil = blockedUntil
        self.sealFailure = sealFailure
    }

    /// The failures that are settled: wrong answers, and reservations that expired before
    /// their answer was settled.
    public var settledFailures: Int { Swift.max(0, failedAttempts - inFlight) }

    /// Whether the name is blocked at `now`: blocked with no end, or with an end after `now`,
    /// or its record failed its seal check.
    public func isBlocked(at now: Date) -> Bool {
        guard sealFailure == nil else { return true }
        guard blocked else { return false }
        guard let blockedUntil else { return true }
        return now < blockedUntil
    }

    /// The attempts left at `now` out of `maxAttempts`, should the answers in flight prove
    /// wrong: 0 while blocked, the full number once a temporary block has ended. (The count
    /// does not change when a reservation expires: it was taken already.)
    public func attemptsLeft(maxAttempts: Int, at now: Date) -> Int {
        if sealFailure != nil { return 0 }
        if blocked {
            return isBlocked(at: now) ? 0 : maxAttempts
        }
        return Swift.max(0, maxAttempts - failedAttempts)
    }

    /// Whether the stored part (taken, blocked, until) differs from `other`'s: what a store
    /// must write.
    package func storedDiffers(from other: AttemptCounter) -> Bool {
        failedAttempts != other.failedAttempts || blocked != other.blocked || blockedUntil != other.blockedUntil
    }

    /// The counter with a temporary block that ended before `now` lifted: every attempt is
    /// back but those held by answers in flight.
    private func liftingEndedBlock(now: Date) -> AttemptCounter {
        guard blocked, let until = blockedUntil, until <= now else { return self }
        return AttemptCounter(failedAttempts: inFlight, inFlight: inFlight)
    }

    /// The counter blocked from `now` (for `blockSeconds`, or until an admin unlocks when 0).
    private func blocking(blockSeconds: Int, now: Date) -> AttemptCounter {
        var next = self
        next.blocked = true
        next.blockedUntil = blockSeconds > 0 ? now.addingTimeInterval(TimeInterval(blockSeconds)) : nil
        return next
    }

    /// Takes one attempt at `now` (the rule of ``CounterStore/reserveAttempt(_:name:maxAttempts:blockSeconds:now:)``),
    /// `inFlight` counted by the store: the reservation and the counter to store (nil when
    /// nothing changes). On `.granted` the store also records the reservation.
    ///
    /// - Blocked: denied. Settled failures that reach `maxAttempts` (reservations that
    ///   expired, a lowered `max_attempts`) block the name now and deny.
    /// - Every attempt left held by answers in flight: ``AttemptReservation/inFlight``, nothing
    ///   taken; the answer waits for them.
    /// - Else one attempt is taken and counts at once, in flight.
    package func reserving(maxAttempts: Int, blockSeconds: Int, now: Date) -> (AttemptReservation, AttemptCounter?) {
        if let sealFailure {
            return (.unsealed(sealFailure), nil)
        }
        var next = liftingEndedBlock(now: now)
        let maxAttempts = Swift.max(1, maxAttempts)
        if !next.blocked, next.settledFailures >= maxAttempts {
            next = next.blocking(blockSeconds: blockSeconds, now: now)
        }
        let changed = next.storedDiffers(from: self) ? next : nil
        if next.blocked {
            return (.denied(blockedUntil: next.blockedUntil), changed)
        }
        if next.failedAttempts >= maxAttempts {
            return (.inFlight, changed)
        }
        next.failedAttempts += 1
        next.inFlight += 1
        return (.granted(attemptsLeft: Swift.max(0, maxAttempts - next.failedAttempts)), next)
    }

    /// Settles a reserved attempt as a failure at `now` (the rule of
    /// ``CounterStore/spendAttempt(_:name:maxAttempts:blockSeconds:now:)``): `inFlight`
    /// counted by the store without the reservation, which `found` says was still stored.
    ///
    /// A reservation found was counted when it was taken; one not found was counted too
    /// unless a success or an unlock (which drop expired reservations) started the counter
    /// over meanwhile, so it is counted again: a failure is never lost, at worst counted
    /// twice when its check outlived its reservation. The failure that makes the settled
    /// ones reach `maxAttempts` blocks the name.
    package func spending(found: Bool, maxAttempts: Int, blockSeconds: Int, now: Date) -> (SpentAttempt, AttemptCounter?) {
        if sealFailure != nil {
            return (.blocked(byThisAnswer: false), nil)
        }
        var next = liftingEndedBlock(now: now)
        // Counted anew: a reservation not found, or one whose count a block's end just cleared.
        if !found || (blocked && !next.blocked) { next.failedAttempts += 1 }
        let maxAttempts = Swift.max(1, maxAttempts)
        let outcome: SpentAttempt
        if next.blocked {
            outcome = .blocked(byThisAnswer: false)
        } else if next.settledFailures >= maxAttempts {
            next = next.blocking(blockSeconds: blockSeconds, now: now)
            outcome = .blocked(byThisAnswer: true)
        } else {
            outcome = .counted(attemptsLeft: maxAttempts - next.settledFailures)
        }
        return (outcome, next.storedDiffers(from: self) ? next : nil)
    }

    /// Settles a reserved attempt as a success (the rule of
    /// ``CounterStore/giveBackAttempt(_:name:now:)``): `inFlight` counted by the store
    /// without the reservation and with the expired ones dropped. The counter starts over
    /// with only the answers still in flight taken, and any block is lifted. Nil when
    /// nothing changes (or the record is broken: nothing is written to it).
    package func givingBack() -> AttemptCounter? {
        guard sealFailure == nil else { return nil }
        let next = AttemptCounter(failedAttempts: inFlight, inFlight: inFlight)
        return next.storedDiffers(from: self) ? next : nil
    }
}
