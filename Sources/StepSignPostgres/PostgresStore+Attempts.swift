import Foundation
import PostgresNIO
import StepSignStorage

// Attempt counters of users and of names that are not users (SPEC §5.1), shared by every
// daemon on the database. A reservation is one transaction that locks the counter's row
// (`SELECT … FOR UPDATE`, or an upsert that locks it) before it reads, decides and writes.
extension PostgresStore {
    /// How long an unused counter of a name that is not a user is kept, at least (as SQLite).
    static let nameCounterIdleSeconds: TimeInterval = 86400

    static func decodeCounter(_ row: PostgresRow) throws -> AttemptCounter {
        do {
            let (failed, blocked, until) = try row.decode((Int, Bool, Date?).self)
            return AttemptCounter(failedAttempts: failed, blocked: blocked, blockedUntil: until)
        } catch {
            throw malformed("attempt counter", error)
        }
    }

    public func attemptCounter(name: String, now: Date) async throws -> AttemptCounter {
        let key = Data(key(of: name))
        return try await inSnapshot { connection in
            // A user's counter is the record's, checked whole: a record that fails its seal
            // counts as blocked (SPEC §5.4).
            if let user = try await Self.checkedUser(connection, name, seal: credentialSeal, lock: false, logger: logger) {
                return user.counter
            }
            let rows = try await connection.query("""
                SELECT failed_attempts, blocked, blocked_until FROM name_counters WHERE name_key = \(key)
                """, logger: logger)
            for try await row in rows { return try Self.decodeCounter(row) }
            return AttemptCounter()
        }
    }

    public func reserveAttempt(name: String, maxAttempts: Int, blockSeconds: Int, now: Date) async throws -> AttemptReservation {
        let key = Data(key(of: name))
        let idle = now.addingTimeInterval(-max(Self.nameCounterIdleSeconds, TimeInterval(blockSeconds)))
        let token = try CredentialToken.random()
        return try await inTransaction { connection in
            // Forget idle counters of names that are not users; rows another reservation holds
            // are left for later rather than waited for.
            try await connection.query("""
                DELETE FROM name_counters WHERE name_key IN (
                    SELECT name_key FROM name_counters WHERE updated_at < \(idle) FOR UPDATE SKIP LOCKED)
                """, logger: logger)
            if let counter = try await Self.checkedUser(connection, name, seal: credentialSeal, lock: true,
                                                        logger: logger)?.counter {
                let (reservation, next) = counter.reserving(maxAttempts: maxAttempts, blockSeconds: blockSeconds, now: now)
                if let next {
                    // A block ends the user's logins (SPEC §3), for good.
                    let newToken: Data? = next.blocked ? token.bytes : nil
                    try await connection.query("""
                        UPDATE users SET failed_attempts = \(next.failedAttempts), blocked = \(next.blocked),
                            blocked_until = \(next.blockedUntil), credential_token = coalesce(\(newToken), credential_token)
                        WHERE name = \(name)
                        """, logger: logger)
                    if next.blocked || counter.blocked {
                        // The block and the token are sealed; the count of failures is not.
                        try await Self.reseal(connection, name, seal: credentialSeal, logger: logger)
                    }
                }
                return reservation
            }
            // Not a user: create or lock the name's counter row in one statement.
            let rows = try await connection.query("""
                INSERT INTO name_counters (name_key, updated_at) VALUES (\(key), \(now))
                ON CONFLICT (name_key) DO UPDATE SET name_key = excluded.name_key
                RETURNING failed_attempts, blocked, blocked_until
                """, logger: logger)
            var stored = AttemptCounter()
            for try await row in rows { stored = try Self.decodeCounter(row) }
            let (reservation, next) = stored.reserving(maxAttempts: maxAttempts, blockSeconds: blockSeconds, now: now)
            if let next {
                try await connection.query("""
                    UPDATE name_counters SET failed_attempts = \(next.failedAttempts), blocked = \(next.blocked),
                        blocked_until = \(next.blockedUntil), updated_at = \(now)
                    WHERE name_key = \(key)
                    """, logger: logger)
            }
            return reservation
        }
    }

    public func giveBackAttempt(name: String, now: Date) async throws {
        let key = Data(key(of: name))
        try await inTransaction { connection in
            if let counter = try await Self.checkedUser(connection, name, seal: credentialSeal, lock: true,
                                                        logger: logger)?.counter {
                // Rows are written only when the counter is not fresh already (a right answer
                // on a clean counter, the common case, writes nothing); a broken record never.
                guard counter.sealFailure == nil, counter != AttemptCounter() else { return }
                try await connection.query("""
                    UPDATE users SET failed_attempts = 0, blocked = false, blocked_until = NULL WHERE name = \(name)
                    """, logger: logger)
                if counter.blocked { try await Self.reseal(connection, name, seal: credentialSeal, logger: logger) }
                return
            }
            try await connection.query("""
                UPDATE name_counters SET failed_attempts = 0, blocked = false, blocked_until = NULL, updated_at = \(now)
                WHERE name_key = \(key) AND (failed_attempts <> 0 OR blocked OR blocked_until IS NOT NULL)
                """, logger: logger)
        }
    }
}
