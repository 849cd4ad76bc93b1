import NIOConcurrencyHelpers
import NIOPosix
import StepSignConfig
import StepSignCrypto
import StepSignStorage
import struct Foundation.Date

/// Checks passwords against the stored scrypt hashes and keeps the attempt counters, which
/// every authenticator of a user shares.
///
/// Counters are in the store, so reconnecting gives no fresh attempts (SPEC §4). A name that
/// is not a user gets the same replies and the same scrypt work as a user: its counter is kept
/// in memory (bounded), and its password is checked against a hash of a random password.
final class PasswordAuthenticator: Sendable {
    /// The outcome of one password answer.
    enum Outcome: Equatable {
        case accepted
        case rejected(attemptsLeft: Int)
        case exhausted
    }

    private let store: any StepSignStore
    /// A hash of a random password, checked in place of a user's when there is no user.
    private let dummy: NIOLockedValueBox<String>
    private let unknownUsers = NIOLockedValueBox<[String: Int]>([:])
    private static let unknownUsersLimit = 10_000

    /// Throws if the dummy hash cannot be made with `parameters`.
    init(store: any StepSignStore, parameters: ScryptParameters) throws(PasswordHashError) {
        self.store = store
        self.dummy = NIOLockedValueBox(try PasswordHash.dummy(parameters: parameters))
    }

    /// The hash an unknown user's answer is checked against: made with the scrypt cost in
    /// force, so it costs what a new user's hash costs.
    var dummyHash: String { dummy.withLockedValue { $0 } }

    /// Follows a reload's `password.scrypt_*`; if the dummy hash cannot be made with them,
    /// throws and keeps the old one.
    func useParameters(_ parameters: ScryptParameters) throws(PasswordHashError) {
        let fresh = try PasswordHash.dummy(parameters: parameters)
        dummy.withLockedValue { $0 = fresh }
    }

    /// Attempts left for `user` before the next answer, or nil if the user is blocked.
    func attemptsLeft(user: String, config: StepSignConfiguration, now: Date) async throws -> Int? {
        let max = config.password.maxAttempts
        if let record = try await store.user(named: user) {
            if record.isBlocked(at: now) { return nil }
            return Swift.max(1, record.attemptsLeft(maxAttempts: max, at: now))
        }
        let failures = unknownUsers.withLockedValue { $0[user] ?? 0 }
        return failures >= max ? nil : max - failures
    }

    /// Counts a successful authentication by another authenticator: the counter starts over.
    func recordSuccess(user: String, now: Date) async throws {
        if try await store.user(named: user) != nil {
            try await store.recordSuccessfulAttempt(user: user, now: now)
        }
    }

    /// Checks `password` for `user`, updating the counters.
    func verify(user: String, password: String, config: StepSignConfiguration, now: Date) async throws -> Outcome {
        let record = try await store.user(named: user)
        let encoded = record?.passwordHash ?? dummyHash
        let matches = try await NIOThreadPool.singleton.runIfActive {
            try PasswordHash.verify(password: password, encoded: encoded)
        }
        guard let record else {
            return failUnknown(user: user, maxAttempts: config.password.maxAttempts)
        }
        if record.isBlocked(at: now) { return .exhausted }
        if matches {
            try await store.recordSuccessfulAttempt(user: user, now: now)
            return .accepted
        }
        return try await recordFailure(user: user, config: config, now: now)
    }

    /// Counts one failed authentication of `user` by any authenticator (password, device
    /// key, IDV assertion): they share the counter.
    func recordFailure(user: String, config: StepSignConfiguration, now: Date) async throws -> Outcome {
        guard let outcome = try await store.recordFailedAttempt(
            user: user, maxAttempts: config.password.maxAttempts,
            blockSeconds: config.password.blockSeconds, now: now
        ) else {
            return failUnknown(user: user, maxAttempts: config.password.maxAttempts)
        }
        return outcome.blocked ? .exhausted : .rejected(attemptsLeft: outcome.attemptsLeft)
    }

    private func failUnknown(user: String, maxAttempts: Int) -> Outcome {
        let failures = unknownUsers.withLockedValue { table in
            if table[user] == nil, table.count >= Self.unknownUsersLimit { table.removeAll(keepingCapacity: true) }
            let count = (table[user] ?? 0) + 1
            table[user] = count
            return count
        }
        return failures >= maxAttempts ? .exhausted : .rejected(attemptsLeft: maxAttempts - failures)
    }
}
