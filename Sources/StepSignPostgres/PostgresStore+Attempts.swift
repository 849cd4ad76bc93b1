import Foundation
import PostgresNIO
import StepSignStorage

// Attempt counters of users and of names that are not users (SPEC §5.1), and the attempts
// reserved by answers still being checked, shared by every daemon on the database. Each
// method is one transaction that first locks the name's counter row (the user's row
// `FOR UPDATE`, or an upsert of its `name_counters` row) and then reads, decides and writes:
// every reservation of a name is added and removed under that lock.
extension PostgresStore {
    /// How long an unused counter of a name that is not a user is kept, at least (as SQLite).
    static let nameCounterIdleSeconds: TimeInterval = 86400

    /// How long a reservation is kept after it expired (as SQLite).
    static let expiredReservationSeconds: TimeInterval = 86400

    static func decodeCounter(_ row: PostgresRow) throws -> AttemptCounter {
        do {
            let (failed, blocked, until) = try row.decode((Int, Bool, Date?).self)
            return AttemptCounter(failedAttempts: failed, blocked: blocked, blockedUntil: until)
        } catch {
            throw malformed("attempt counter", error)
        }
    }

    /// A name's counter, locked in the current transaction.
    struct LockedCounter {
        /// The name is a user (the counter is the user's row), not a `name_counters` row.
        var isUser: Bool
        var counter: AttemptCounter
    }

    /// Locks and reads `name`'s counter: the user's row, checked whole (a record that fails
    /// its seal counts as blocked, SPEC §5.4), or the name's counter row, made if missing.
    func lockCounter(_ connection: AnsweredConnection, name: String, key: Data, now: Date) async throws -> LockedCounter {
        if let user = try await Self.checkedUser(connection, name, seal: credentialSeal, lock: true, logger: logger) {
            return LockedCounter(isUser: true, counter: user.counter)
        }
        // Not a user: create or lock the name's counter row in one statement.
        let rows = try await connection.query("""
            INSERT INTO name_counters (name_key, updated_at) VALUES (\(key), \(now))
            ON CONFLICT (name_key) DO UPDATE SET name_key = excluded.name_key
            RETURNING failed_attempts, blocked, blocked_until
            """, logger: logger)
        var stored = AttemptCounter()
        for try await row in rows { stored = try Self.decodeCounter(row) }
        return LockedCounter(isUser: false, counter: stored)
    }

    /// How many reservations of the name with keyed hash `key` are in flight at `now`.
    func reservationsInFlight(_ connection: AnsweredConnection, key: Data, now: Date) async throws -> Int {
        let rows = try await connection.query("""
            SELECT count(*) FROM attempt_reservations WHERE name_key = \(key) AND expires_at > \(now)
            """, logger: logger)
        var count = 0
        for try await row in rows {
            do { count = try row.decode(Int.self) } catch { throw Self.malformed("attempt_reservations", error) }
        }
        return count
    }

    /// Removes reservation `id` of the name with keyed hash `key`; whether it was there.
    func removeReservation(_ connection: AnsweredConnection, _ id: ReservationID, key: Data) async throws -> Bool {
        try await Self.count(connection.query("""
            DELETE FROM attempt_reservations WHERE id = \(id.bytes) AND name_key = \(key) RETURNING 1
            """, logger: logger)) > 0
    }

    /// Forgets every reservation of `name` (an unlock, a user added or removed; see SQLite's
    /// `dropReservations`).
    func dropReservations(_ connection: AnsweredConnection, name: String) async throws {
        try await connection.query("DELETE FROM attempt_reservations WHERE name_key = \(Data(key(of: name)))", logger: logger)
    }

    /// Writes `next` over `locked`'s counter: a new block gives a user a new credential token
    /// (its logins end), and a user's record is sealed again when its block changes.
    func storeCounter(_ connection: AnsweredConnection, _ locked: LockedCounter, to next: AttemptCounter, name: String,
                      key: Data, now: Date) async throws {
        let current = locked.counter
        guard locked.isUser else {
            try await connection.query("""
                UPDATE name_counters SET failed_attempts = \(next.failedAttempts), blocked = \(next.blocked),
                    blocked_until = \(next.blockedUntil), updated_at = \(now)
                WHERE name_key = \(key)
                """, logger: logger)
            return
        }
        // A block ends the user's logins (SPEC §3), for good.
        let newBlock = next.blocked && (!current.blocked || next.blockedUntil != current.blockedUntil)
        let newToken: Data? = newBlock ? try CredentialToken.random().bytes : nil
        try await connection.query("""
            UPDATE users SET failed_attempts = \(next.failedAttempts), blocked = \(next.blocked),
                blocked_until = \(next.blockedUntil), credential_token = coalesce(\(newToken), credential_token)
            WHERE name = \(name)
            """, logger: logger)
        if next.blocked || current.blocked {
            // The block and the token are sealed; the count of failures is not.
            try await Self.reseal(connection, name, seal: credentialSeal, logger: logger)
        }
    }

    public func attemptCounter(name: String, now: Date) async throws -> AttemptCounter {
        let key = Data(key(of: name))
        return try await inSnapshot { connection in
            var counter = AttemptCounter()
            // A user's counter is the record's, checked whole: a record that fails its seal
            // counts as blocked (SPEC §5.4).
            if let user = try await Self.checkedUser(connection, name, seal: credentialSeal, lock: false, logger: logger) {
                counter = user.counter
            } else {
                let rows = try await connection.query("""
                    SELECT failed_attempts, blocked, blocked_until FROM name_counters WHERE name_key = \(key)
                    """, logger: logger)
                for try await row in rows { counter = try Self.decodeCounter(row) }
            }
            counter.inFlight = try await reservationsInFlight(connection, key: key, now: now)
            return counter
        }
    }

    public func reserveAttempt(_ id: ReservationID, name: String, maxAttempts: Int, blockSeconds: Int,
                               now: Date) async throws -> AttemptReservation {
        let key = Data(key(of: name))
        let idle = now.addingTimeInterval(-max(Self.nameCounterIdleSeconds, TimeInterval(blockSeconds)))
        let forgotten = now.addingTimeInterval(-Self.expiredReservationSeconds)
        return try await inTransaction { connection in
            // Forget idle counters of names that are not users, and reservations expired a day
            // ago; rows another transaction holds are left for later rather than waited for.
            try await connection.query("""
                DELETE FROM name_counters WHERE name_key IN (
                    SELECT name_key FROM name_counters WHERE updated_at < \(idle) FOR UPDATE SKIP LOCKED)
                """, logger: logger)
            try await connection.query("""
                DELETE FROM attempt_reservations WHERE id IN (
                    SELECT id FROM attempt_reservations WHERE expires_at < \(forgotten) FOR UPDATE SKIP LOCKED)
                """, logger: logger)
            var locked = try await lockCounter(connection, name: name, key: key, now: now)
            locked.counter.inFlight = try await reservationsInFlight(connection, key: key, now: now)
            let (reservation, next) = locked.counter.reserving(maxAttempts: maxAttempts, blockSeconds: blockSeconds, now: now)
            if case .granted = reservation {
                try await connection.query("""
                    INSERT INTO attempt_reservations (id, name_key, expires_at)
                    VALUES (\(id.bytes), \(key), \(now.addingTimeInterval(AttemptReservation.lifetime)))
                    """, logger: logger)
            }
            if let next { try await storeCounter(connection, locked, to: next, name: name, key: key, now: now) }
            return reservation
        }
    }

    public func giveBackAttempt(_ id: ReservationID, name: String, now: Date) async throws {
        let key = Data(key(of: name))
        try await inTransaction { connection in
            var locked = try await lockCounter(connection, name: name, key: key, now: now)
            _ = try await removeReservation(connection, id, key: key)
            // Expired reservations were failures; the success starts the count over without them.
            try await connection.query("""
                DELETE FROM attempt_reservations WHERE name_key = \(key) AND expires_at <= \(now)
                """, logger: logger)
            locked.counter.inFlight = try await reservationsInFlight(connection, key: key, now: now)
            // Rows are written only when the counter is not fresh already (a right answer on a
            // clean counter, the common case, writes no counter); a broken record never.
            guard let next = locked.counter.givingBack() else { return }
            try await storeCounter(connection, locked, to: next, name: name, key: key, now: now)
        }
    }

    public func spendAttempt(_ id: ReservationID, name: String, maxAttempts: Int, blockSeconds: Int,
                             now: Date) async throws -> SpentAttempt {
        let key = Data(key(of: name))
        return try await inTransaction { connection in
            var locked = try await lockCounter(connection, name: name, key: key, now: now)
            let found = try await removeReservation(connection, id, key: key)
            locked.counter.inFlight = try await reservationsInFlight(connection, key: key, now: now)
            let (spent, next) = locked.counter.spending(found: found, maxAttempts: maxAttempts, blockSeconds: blockSeconds,
                                                        now: now)
            if let next { try await storeCounter(connection, locked, to: next, name: name, key: key, now: now) }
            return spent
        }
    }
}
