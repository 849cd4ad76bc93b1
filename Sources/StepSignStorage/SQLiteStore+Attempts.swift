import Foundation
import GRDB
import StepSignCrypto

// Attempt counters of users and of names that are not users (SPEC §5.1). Each method is one
// write transaction (`BEGIN IMMEDIATE` on the single writer), so read, decide and write are
// one atomic step.
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

    public func attemptCounter(name: String, now: Date) async throws -> AttemptCounter {
        try await pool.read { db in
            try self.readCounter(db, try self.counterRow(db, name: name))
        }
    }

    public func reserveAttempt(name: String, maxAttempts: Int, blockSeconds: Int, now: Date) async throws -> AttemptReservation {
        try await pool.write { db in
            try self.pruneNameCounters(db, blockSeconds: blockSeconds, now: now)
            let row = try self.counterRow(db, name: name)
            let current = try self.readCounter(db, row)
            let (reservation, next) = current.reserving(maxAttempts: maxAttempts, blockSeconds: blockSeconds, now: now)
            if let next {
                try self.writeCounter(db, row, next, now: now)
                if next.blocked, case let .user(name) = row {
                    // A block ends the user's logins (SPEC §3), for good: an unlock or the end
                    // of a temporary block does not bring them back.
                    try db.cachedStatement(sql: "UPDATE users SET credential_token = ? WHERE name = ?")
                        .execute(arguments: [try CredentialToken.random().bytes, name])
                }
                if case let .user(name) = row, next.blocked || current.blocked {
                    // The block and the token are sealed; the count of failures is not.
                    try self.reseal(db, name)
                }
            }
            return reservation
        }
    }

    public func giveBackAttempt(name: String, now: Date) async throws {
        try await pool.write { db in
            let row = try self.counterRow(db, name: name)
            let current = try self.readCounter(db, row)
            guard current.sealFailure == nil, current != AttemptCounter() else { return }
            try self.writeCounter(db, row, AttemptCounter(), now: now)
            if case let .user(name) = row, current.blocked {
                try self.reseal(db, name)
            }
        }
    }
}
