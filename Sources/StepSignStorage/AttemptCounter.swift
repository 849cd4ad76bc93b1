import Foundation

/// The attempt counter of a name, user or not (SPEC §4, §5.1): failures since the last
/// success or unlock, and the block they led to.
public struct AttemptCounter: Sendable, Equatable {
    /// Attempts taken since the last success or unlock (a reserved attempt counts until it
    /// is given back).
    public var failedAttempts: Int
    /// The name was blocked after too many attempts.
    public var blocked: Bool
    /// When a temporary block ends; nil while blocked means until an admin unlocks.
    public var blockedUntil: Date?
    /// The user's record failed its seal check (SPEC §5.4): the name counts as blocked, for
    /// good, whatever the counter says, and no attempt is ever taken.
    public var sealFailure: SealFailure?

    public init(failedAttempts: Int = 0, blocked: Bool = false, blockedUntil: Date? = nil, sealFailure: SealFailure? = nil) {
        self.failedAttempts = failedAttempts
        self.blocked = blocked
        self.blockedUntil = blockedUntil
        self.sealFailure = sealFailure
    }

    /// Whether the name is blocked at `now`: blocked with no end, or with an end after `now`,
    /// or its record failed its seal check.
    public func isBlocked(at now: Date) -> Bool {
        guard sealFailure == nil else { return true }
        guard blocked else { return false }
        guard let blockedUntil else { return true }
        return now < blockedUntil
    }

    /// The attempts left at `now` out of `maxAttempts`: 0 while blocked, the full number once
    /// a temporary block has ended.
    public func attemptsLeft(maxAttempts: Int, at now: Date) -> Int {
        if sealFailure != nil { return 0 }
        if blocked {
            return isBlocked(at: now) ? 0 : maxAttempts
        }
        return max(0, maxAttempts - failedAttempts)
    }

    /// Takes one attempt at `now` (the rule of ``StepSignStore/reserveAttempt(name:maxAttempts:blockSeconds:now:)``),
    /// returning the reservation and the counter to store, or nil when nothing is to be stored.
    package func reserving(maxAttempts: Int, blockSeconds: Int, now: Date) -> (AttemptReservation, AttemptCounter?) {
        if let sealFailure {
            return (.unsealed(sealFailure), nil)
        }
        var next = self
        if next.blocked, let until = next.blockedUntil, until <= now {
            // The temporary block is over: start again with every attempt.
            next = AttemptCounter()
        }
        if next.blocked {
            return (.denied(blockedUntil: next.blockedUntil), nil)
        }
        let maxAttempts = max(1, maxAttempts)
        next.failedAttempts += 1
        if next.failedAttempts >= maxAttempts {
            next.blocked = true
            next.blockedUntil = blockSeconds > 0 ? now.addingTimeInterval(TimeInterval(blockSeconds)) : nil
        }
        return (.granted(attemptsLeft: max(0, maxAttempts - next.failedAttempts)), next)
    }
}
