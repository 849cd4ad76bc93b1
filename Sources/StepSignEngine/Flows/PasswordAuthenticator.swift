import Logging
import NIOConcurrencyHelpers
import NIOPosix
import StepSignConfig
import StepSignCrypto
import StepSignProtocol
import StepSignStorage
import struct Foundation.Date

/// Checks answers against the attempt counters every authenticator of a name shares, by the
/// rule of SPEC §5.1: reserve an attempt in the store (waiting while the attempts left are
/// all held by checks in flight), then check, then give it back if the answer was right or
/// spend it if wrong.
///
/// Counters are in the store, for users and for names that are not users alike, so neither
/// reconnecting, concurrency, nor a restart gives a caller more than `max_attempts` checked
/// answers between two successes. A name that is not a user gets the same replies and the
/// same scrypt work: its password is checked against a dummy hash made with the parameters
/// most stored hashes have.
final class PasswordAuthenticator: Sendable {
    /// The outcome of one answer.
    enum Outcome: Equatable {
        case accepted
        case rejected(attemptsLeft: Int)
        /// No attempt was left (the answer was not checked), or this one was the last.
        case exhausted
    }

    private let store: any CredentialStore & CounterStore
    /// Where scrypt checks wait their uid's turn.
    let checks: CheckScheduler
    /// Told when a wrong answer used a name's last attempt (the name is now blocked), after the
    /// answer's outcome is decided and without delaying it: a name that is a user must not
    /// answer more slowly than one that is not.
    private let onBlocked: @Sendable (_ name: String, _ peer: Peer, _ now: Date) -> Void
    private let logger: Logger
    private let sealAlarm: SealAlarm
    /// What an answer waiting for checks in flight measures its wait with, and pauses on.
    private let clock: WaitClock
    private let dummies: NIOLockedValueBox<Dummies>

    /// Hashes of random passwords, checked in place of a hash when there is none.
    private struct Dummies {
        /// Made with the configured parameters: what a code issued now is hashed with.
        var configured: String
        /// Made with the parameters most stored password hashes have (a stored hash keeps the
        /// parameters it was made with until its user logs in again).
        var stored: String
        var storedParameters: ScryptParameters
        /// When `stored` was last matched to the store.
        var checkedAt: Date?
        var refreshing = false
    }

    /// How often the dummy is matched to the parameters of the stored hashes.
    static let dummyRefreshSeconds: Double = 600

    init(store: any CredentialStore & CounterStore, parameters: ScryptParameters, checks: CheckScheduler, logger: Logger,
         sealAlarm: SealAlarm? = nil, clock: WaitClock = .continuous,
         onBlocked: @escaping @Sendable (_ name: String, _ peer: Peer, _ now: Date) -> Void = { _, _, _ in }) throws {
        self.store = store
        self.checks = checks
        self.clock = clock
        self.onBlocked = onBlocked
        self.logger = logger
        self.sealAlarm = sealAlarm ?? SealAlarm(logger: logger)
        let dummy = try PasswordHash.dummy(parameters: parameters)
        self.dummies = NIOLockedValueBox(Dummies(configured: dummy, stored: dummy, storedParameters: parameters))
    }

    /// The hash an activation code of a name that is not a user is checked against: made with
    /// the scrypt cost in force, as a user's code is.
    var configuredDummy: String { dummies.withLockedValue { $0.configured } }

    /// The parameters of the dummy checked for names that are not users (for tests).
    var storedDummyParameters: ScryptParameters { dummies.withLockedValue { $0.storedParameters } }

    /// Whether the dummy is being matched to the store (for tests).
    var isRefreshingDummy: Bool { dummies.withLockedValue { $0.refreshing } }

    /// Follows a reload's `password.scrypt_*`; throws (keeping the old) if it cannot hash.
    func useParameters(_ parameters: ScryptParameters) throws {
        let fresh = try PasswordHash.dummy(parameters: parameters)
        dummies.withLockedValue {
            $0.configured = fresh
            $0.checkedAt = nil
        }
    }

    /// Attempts left for `name` before the next answer, or nil if it is blocked.
    func attemptsLeft(user: String, config: StepSignConfiguration, now: Date) async throws -> Int? {
        let counter = try await store.attemptCounter(name: user, now: now)
        if let failure = counter.sealFailure { sealAlarm.report(user: user, failure) }
        if counter.isBlocked(at: now) { return nil }
        return Swift.max(1, counter.attemptsLeft(maxAttempts: config.password.maxAttempts, at: now))
    }

    /// An attempt reserved for one answer, to settle once the answer has been checked.
    struct HeldAttempt: Sendable {
        let id: ReservationID
        let user: String
        /// When it was reserved: the request's time plus what the answer waited.
        let at: Date
    }

    /// The first pause of an answer waiting for checks in flight; each next one is twice as
    /// long, up to ``longestWaitPause``: a check is over in tens of milliseconds to a second,
    /// and waiting answers must not keep the store busy.
    static let firstWaitPause: Duration = .milliseconds(10)
    static let longestWaitPause: Duration = .milliseconds(200)

    /// Takes one attempt of `user` before an answer is checked (SPEC §5.1): the reservation,
    /// and the attempt to settle when one was granted.
    ///
    /// While every attempt left is held by answers still being checked (on this daemon or
    /// another), the answer waits for them instead of being refused: it asks the store again
    /// after a pause that grows from ``firstWaitPause`` to ``longestWaitPause``, for at most
    /// `password.check_wait_seconds`, then gets error 14. It waits holding no worker, so the
    /// checks it waits for go on; an answer checked by scrypt waits inside its uid's admission
    /// (``CheckScheduler``), so one uid's waiting answers stay within `max_checks_per_uid`.
    func reserve(user: String, config: StepSignConfiguration, now: Date) async throws -> (AttemptReservation, HeldAttempt?) {
        let id = try ReservationID.random()
        let start = clock.now()
        let limit = Duration.seconds(config.password.checkWaitSeconds)
        var pause = Self.firstWaitPause
        while true {
            let waited = start.duration(to: clock.now())
            let at = now.addingTimeInterval(Double(waited.components.seconds) + Double(waited.components.attoseconds) / 1e18)
            let reservation = try await store.reserveAttempt(id, name: user, maxAttempts: config.password.maxAttempts,
                                                             blockSeconds: config.password.blockSeconds, now: at)
            switch reservation {
            case .granted:
                return (reservation, HeldAttempt(id: id, user: user, at: at))
            case let .unsealed(failure):
                sealAlarm.report(user: user, failure)
                return (reservation, nil)
            case .denied:
                return (reservation, nil)
            case .inFlight:
                guard waited < limit, !Task.isCancelled else {
                    throw StepSignError(.busy, "every attempt left is held by answers still being checked; "
                                        + "try again later (password.check_wait_seconds)")
                }
                await clock.sleep(Swift.min(pause, limit - waited))
                pause = Swift.min(pause * 2, Self.longestWaitPause)
            }
        }
    }

    /// A right answer gives its attempt back; the counter starts over.
    func giveBack(_ held: HeldAttempt) async throws {
        try await store.giveBackAttempt(held.id, name: held.user, now: held.at)
    }

    /// A wrong answer spends its attempt: what that means for the flow. `onBlocked` is told
    /// when this answer used the last attempt.
    func spend(_ held: HeldAttempt, config: StepSignConfiguration, peer: Peer) async throws -> Outcome {
        switch try await store.spendAttempt(held.id, name: held.user, maxAttempts: config.password.maxAttempts,
                                            blockSeconds: config.password.blockSeconds, now: held.at) {
        case let .counted(attemptsLeft):
            return .rejected(attemptsLeft: attemptsLeft)
        case let .blocked(byThisAnswer):
            if byThisAnswer { onBlocked(held.user, peer, held.at) }
            return .exhausted
        }
    }

    /// Settles `held` as a failure after its check failed with an error: an answer whose check
    /// did not end counts as wrong (fail closed). If even that fails, the reservation expires
    /// and counts as a failure then.
    private func spendAfterError(_ held: HeldAttempt, config: StepSignConfiguration, peer: Peer) async {
        do {
            _ = try await spend(held, config: config, peer: peer)
        } catch {
            logger.warning("could not settle an attempt after a failed check; it counts once it expires",
                           metadata: ["user": "\(held.user)", "error": "\(error)"])
        }
    }

    /// Checks an answer of `user` that is not a password (a device signature, an IDV
    /// assertion) under the same rule: an attempt reserved first (waiting for checks in flight
    /// as ``reserve(user:config:now:)`` does), `check` run only if one was granted (it returns
    /// why it refuses the answer, or nil), the attempt given back if right, spent if wrong.
    func checkWithAttempt(user: String, context: RequestContext, logger: Logger,
                          check: () async throws -> String?) async throws -> Outcome {
        let (_, held) = try await reserve(user: user, config: context.config, now: context.now)
        guard let held else {
            logger.info("step-up answer rejected", metadata: ["user": "\(user)", "reason": "no attempt left"])
            return .exhausted
        }
        let refusal: String?
        do {
            refusal = try await check()
        } catch {
            await spendAfterError(held, config: context.config, peer: context.peer)
            throw error
        }
        guard let refusal else {
            try await giveBack(held)
            return .accepted
        }
        logger.info("step-up answer rejected", metadata: ["user": "\(user)", "reason": "\(refusal)"])
        return try await spend(held, config: context.config, peer: context.peer)
    }

    /// Checks `password` for `user` for `peer`: admitted to the queue of the peer's uid (error
    /// 14 past `password.max_checks_per_uid`), an attempt reserved (waiting for checks in
    /// flight, then 14 past `password.check_wait_seconds`), scrypt in the uid's turn, the
    /// attempt given back if right, spent if wrong.
    ///
    /// The user's record is read once, after the reservation; a right answer returns it, so
    /// the flow goes on with the record whose hash it checked (its credential token, its
    /// expiry) instead of reading it again.
    func verify(user: String, password: String, peer: Peer, config: StepSignConfiguration, now: Date) async throws -> PasswordVerification {
        defer { refreshDummyIfStale(now: now) }
        return try await checks.withSlot(uid: peer.uid, limit: config.password.maxChecksPerUID) { slot in
            let (_, held) = try await reserve(user: user, config: config, now: now)
            guard let held else { return .exhausted }
            let record: UserRecord?
            let matches: Bool
            do {
                record = try await store.user(named: user)
                if let failure = record?.sealFailure {
                    // Changed behind the daemon's back since the reservation: answered as blocked.
                    sealAlarm.report(user: user, failure)
                    _ = try await spend(held, config: config, peer: peer)
                    return .exhausted
                }
                let encoded = record?.passwordHash ?? dummies.withLockedValue { $0.stored }
                matches = try await slot.run { try PasswordHash.verify(password: password, encoded: encoded) }
            } catch {
                await spendAfterError(held, config: config, peer: peer)
                throw error
            }
            guard matches, let record else {
                if case let .rejected(attemptsLeft) = try await spend(held, config: config, peer: peer) {
                    return .rejected(attemptsLeft: attemptsLeft)
                }
                return .exhausted
            }
            try await giveBack(held)
            try await rehashIfNeeded(record, password: password, parameters: config.password.scryptParameters, slot: slot)
            return .accepted(record)
        }
    }

    /// A password stored with other parameters than the configured ones is hashed again with
    /// the right password in hand, so that raising the cost reaches every user who logs in.
    private func rehashIfNeeded(_ record: UserRecord, password: String, parameters: ScryptParameters,
                                slot: CheckScheduler.Slot) async throws {
        guard let stored = try? PasswordHash.parameters(of: record.passwordHash), stored != parameters else { return }
        let fresh = try await slot.run { try PasswordHash.make(password: password, parameters: parameters) }
        if try await store.rehashPassword(user: record.name, expected: record.passwordHash, replacement: fresh) {
            logger.info("password rehashed with the configured scrypt parameters", metadata: ["user": "\(record.name)"])
        }
    }

    /// Matches the dummy to the parameters most stored hashes have, in the background (the
    /// request that notices does not wait, so its timing does not change).
    private func refreshDummyIfStale(now: Date) {
        let due = dummies.withLockedValue { state -> Bool in
            guard !state.refreshing else { return false }
            if let checkedAt = state.checkedAt, now.timeIntervalSince(checkedAt) < Self.dummyRefreshSeconds { return false }
            state.refreshing = true
            return true
        }
        guard due else { return }
        Task { [store, dummies, logger] in
            var made: (String, ScryptParameters)?
            do {
                var counts: [ScryptParameters: Int] = [:]
                for user in try await store.listUsers() {
                    if let parameters = try? PasswordHash.parameters(of: user.passwordHash) { counts[parameters, default: 0] += 1 }
                }
                if let common = counts.max(by: { $0.value < $1.value })?.key,
                   common != dummies.withLockedValue({ $0.storedParameters }) {
                    made = (try await NIOThreadPool.singleton.runIfActive { try PasswordHash.dummy(parameters: common) }, common)
                }
            } catch {
                logger.warning("could not match the dummy password hash to the stored ones", metadata: ["error": "\(error)"])
            }
            dummies.withLockedValue { state in
                if let (hash, parameters) = made {
                    state.stored = hash
                    state.storedParameters = parameters
                }
                state.checkedAt = now
                state.refreshing = false
            }
        }
    }
}
