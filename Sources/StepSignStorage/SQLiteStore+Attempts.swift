import Foundation
import GRDB
import StepSignCrypto

// Attempt counters of users and of names that are not users (SPEC §5.1), and the attempts
// reserved by answers still being checked. Each method is one write transaction (`BEGIN
// IMMEDIATE` on the single writer), so read, decide and write are one atomic step.
extension SQLiteStore {
    /// Where a name's counter lives: a user's row, or a row keyed by the name's keyed hash.
    enum CounterRow {
        case user(String)
        case unknown(key: Data)
    }

    /// The HMAC under which a name that is not a user is counted.
    func key(of name: String) -> Data {
        Data(HMACSHA256.mac(key: nameKey, message: Array(name.utf8)))
    }

    func counterRow(_ db: Database, name: String) throws -> CounterRow {
        try Self.userExists(db, name) ? .user(name) : .unknown(key: key(of: name))
    }

    func readCounter(_ db: Database, _ row: CounterRow) throws -> AttemptCounter {
        let fetched: Row?
        switch row {
        case let .user(name):
            // A user's counter is the record's, checked whole: a record that fails its seal
            // counts as blocked (SPEC §5.4).
            if let user = try checkedUser(db, name) { return user.counter }
            fetched = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT failed_attempts, blocked, blocked_until FROM users WHERE name = ?"),
                arguments: [name]
            )
        case let .unknown(key):
            fetched = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT failed_attempts, blocked, blocked_until FROM name_counters WHERE name_key = ?"),
                arguments: [key]
            )
        }
        guard let fetched else { return AttemptCounter() }
        do {
            return AttemptCounter(
                failedAttempts: try fetched.decode(forColumn: "failed_attempts"),
                blocked: try fetched.decode(forColumn: "blocked"),
                blockedUntil: (try fetched.decode(Double?.self, forColumn: "blocked_until")).map(Date.init(storageSeconds:))
            )
        } catch {
            throw StorageError.malformedRow(table: "attempt counter", detail: "\(error)")
        }
    }

    func writeCounter(_ db: Database, _ row: CounterRow, _ counter: AttemptCounter, now: Date) throws {
        switch row {
        case let .user(name):
            try db.cachedStatement(sql: "UPDATE users SET failed_attempts = ?, blocked = ?, blocked_until = ? WHERE name = ?")
                .execute(arguments: [counter.failedAttempts, counter.blocked, counter.blockedUntil?.storageSeconds, name])
        case let .unknown(key):
            try db.cachedStatement(sql: """
                INSERT INTO name_counters (name_key, failed_attempts, blocked, blocked_until, updated_at)
                VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (name_key) DO UPDATE SET failed_attempts = excluded.failed_attempts,
                    blocked = excluded.blocked, blocked_until = excluded.blocked_until, updated_at = excluded.updated_at
                """)
                .execute(arguments: [key, counter.failedAttempts, counter.blocked, counter.blockedUntil?.storageSeconds,
                                     now.storageSeconds])
        }
    }

    /// Forgets the counters of names that are not users once idle past a day or the block
    /// time, whichever is longer (a user's stays with the user).
    func pruneNameCounters(_ db: Database, blockSeconds: Int, now: Date) throws {
        let idle = max(Self.nameCounterIdleSeconds, TimeInterval(blockSeconds))
        try db.cachedStatement(sql: "DELETE FROM name_counters WHERE updated_at < ?")
            .execute(arguments: [now.addingTimeInterval(-idle).storageSeconds])
    }

    /// How long an unused counter of a name that is not a user is kept, at least.
    static let nameCounterIdleSeconds: TimeInterval = 86400

    /// How long a reservation is kept after it expired (it counts as a failure from its
    /// expiry on; the row is only needed if its answer settles after all).
    static let expiredReservationSeconds: TimeInterval = 86400

    /// Forgets reservations that expired more than a day ago, of any name.
    func pruneReservations(_ db: Database, now: Date) throws {
        try db.cachedStatement(sql: "DELETE FROM attempt_reservations WHERE expires_at < ?")
            .execute(arguments: [now.addingTimeInterval(-Self.expiredReservationSeconds).storageSeconds])
    }

    /// How many reservations of the name with keyed hash `key` are in flight at `now`.
    func reservationsInFlight(_ db: Database, key: Data, now: Date) throws -> Int {
        try Int.fetchOne(
            db.cachedStatement(sql: "SELECT count(*) FROM attempt_reservations WHERE name_key = ? AND expires_at > ?"),
            arguments: [key, now.storageSeconds]
        ) ?? 0
    }

    /// Removes reservation `id` of the name with keyed hash `key`; whether it was there.
    func removeReservation(_ db: Database, _ id: ReservationID, key: Data) throws -> Bool {
        try db.cachedStatement(sql: "DELETE FROM attempt_reservations WHERE id = ? AND name_key = ?")
            .execute(arguments: [id.bytes, key])
        return db.changesCount > 0
    }

    /// Forgets every reservation of `name`: its counter starts over (an unlock), or moves
    /// between a user's row and the rows of names that are not users (the user is added or
    /// removed). An answer still in flight then finds its reservation gone and counts its
    /// failure anew, on the counter the name has then.
    func dropReservations(_ db: Database, name: String) throws {
        try db.cachedStatement(sql: "DELETE FROM attempt_reservations WHERE name_key = ?").execute(arguments: [key(of: name)])
    }

    /// Writes `next` over `current` on `row`: a new block gives a user a new credential token
    /// (its logins end), and a user's record is sealed again when its block changes.
    func storeCounter(_ db: Database, _ row: CounterRow, from current: AttemptCounter, to next: AttemptCounter,
                      now: Date) throws {
        try writeCounter(db, row, next, now: now)
        guard case let .user(name) = row else { return }
        if next.blocked, !current.blocked || next.blockedUntil != current.blockedUntil {
            // A block ends the user's logins (SPEC §3), for good: an unlock or the end of a
            // temporary block does not bring them back.
            try db.cachedStatement(sql: "UPDATE users SET credential_token = ? WHERE name = ?")
                .execute(arguments: [try CredentialToken.random().bytes, name])
        }
        if next.blocked || current.blocked {
            // The block and the token are sealed; the count of failures is not.
            try reseal(db, name)
        }
    }

    public func attemptCounter(name: String, now: Date) async throws -> AttemptCounter {
        try await pool.read { db in
            var counter = try self.readCounter(db, try self.counterRow(db, name: name))
            counter.inFlight = try self.reservationsInFlight(db, key: self.key(of: name), now: now)
            return counter
        }
    }

    public func reserveAttempt(_ id: ReservationID, name: String, maxAttempts: Int, blockSeconds: Int,
                               now: Date) async throws -> AttemptReservation {
        try await pool.write { db in
            try self.pruneNameCounters(db, blockSeconds: blockSeconds, now: now)
            try self.pruneReservations(db, now: now)
            let row = try self.counterRow(db, name: name)
            let key = self.key(of: name)
            var current = try self.readCounter(db, row)
            current.inFlight = try self.reservationsInFlight(db, key: key, now: now)
            let (reservation, next) = current.reserving(maxAttempts: maxAttempts, blockSeconds: blockSeconds, now: now)
            if case .granted = reservation {
                try db.cachedStatement(sql: "INSERT INTO attempt_reservations (id, name_key, expires_at) VALUES (?, ?, ?)")
                    .execute(arguments: [id.bytes, key, now.addingTimeInterval(AttemptReservation.lifetime).storageSeconds])
            }
            if let next { try self.storeCounter(db, row, from: current, to: next, now: now) }
            return reservation
        }
    }

    public func giveBackAttempt(_ id: ReservationID, name: String, now: Date) async throws {
        try await pool.write { db in
            let row = try self.counterRow(db, name: name)
            let key = self.key(of: name)
            _ = try self.removeReservation(db, id, key: key)
            // Expired reservations were failures; the success starts the count over without them.
            try db.cachedStatement(sql: "DELETE FROM attempt_reservations WHERE name_key = ? AND expires_at <= ?")
                .execute(arguments: [key, now.storageSeconds])
            var current = try self.readCounter(db, row)
            current.inFlight = try self.reservationsInFlight(db, key: key, now: now)
            guard let next = current.givingBack() else { return }
            try self.storeCounter(db, row, from: current, to: next, now: now)
        }
    }

    public func spendAttempt(_ id: ReservationID, name: String, maxAttempts: Int, blockSeconds: Int,
                             now: Date) async throws -> SpentAttempt {
        try await pool.write { db in
            let row = try self.counterRow(db, name: name)
            let key = self.key(of: name)
            let found = try self.removeReservation(db, id, key: key)
            var current = try self.readCounter(db, row)
            current.inFlight = try self.reservationsInFlight(db, key: key, now: now)
            let (spent, next) = current.spending(found: found, maxAttempts: maxAttempts, blockSeconds: blockSeconds, now: now)
            if let next { try self.storeCounter(db, row, from: current, to: next, now: now) }
            return spent
        }
    }
}
