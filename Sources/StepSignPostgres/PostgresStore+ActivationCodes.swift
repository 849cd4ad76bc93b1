import Foundation
import PostgresNIO
import StepSignStorage

// Forgot-password activation codes and the per-name hourly budget (SPEC §5.1).
extension PostgresStore {
    /// The length of an activation-code budget's window (as SQLite).
    static let activationWindowSeconds: TimeInterval = 3600

    public func putActivationCode(_ code: ActivationCodeRecord) async throws {
        try await inTransaction { connection in
            guard try await Self.count(connection.query(
                "SELECT 1 FROM users WHERE name = \(code.user) FOR SHARE", logger: logger
            )) == 1 else {
                throw StorageError.noSuchUser(code.user)
            }
            try await Self.putActivationCode(connection, code, logger: logger)
        }
    }

    static func putActivationCode(_ connection: AnsweredConnection, _ code: ActivationCodeRecord, logger: Logger) async throws {
        try await connection.query("""
            INSERT INTO activation_codes (user_name, code_hash, verification_key, expires_at, failed_attempts)
            VALUES (\(code.user), \(code.codeHash), \(code.verificationKey), \(code.expiresAt), \(max(0, code.failedAttempts)))
            ON CONFLICT (user_name) DO UPDATE SET
                code_hash = excluded.code_hash,
                verification_key = excluded.verification_key,
                expires_at = excluded.expires_at,
                failed_attempts = excluded.failed_attempts
            """, logger: logger)
    }

    public func activationCode(user: String) async throws -> ActivationCodeRecord? {
        try await withConnection { connection in
            let rows = try await connection.query("""
                SELECT user_name, code_hash, verification_key, expires_at, failed_attempts
                FROM activation_codes WHERE user_name = \(user)
                """, logger: logger)
            for try await row in rows {
                do {
                    let (user, hash, key, expires, failed) = try row.decode((String, String, String, Date, Int).self)
                    return ActivationCodeRecord(user: user, codeHash: hash, verificationKey: key, expiresAt: expires, failedAttempts: failed)
                } catch {
                    throw Self.malformed("activation_codes", error)
                }
            }
            return nil
        }
    }

    @discardableResult
    public func deleteActivationCode(user: String) async throws -> Bool {
        try await withConnection { connection in
            try await Self.count(connection.query(
                "DELETE FROM activation_codes WHERE user_name = \(user) RETURNING 1", logger: logger
            )) > 0
        }
    }

    /// Creates or locks the name's budget row (one upsert, which holds the row until the
    /// transaction ends) and returns it as of `now`: a window that ended starts over.
    private func lockActivationBudget(_ connection: AnsweredConnection, key: Data, now: Date) async throws
        -> (start: Date, codes: Int, failed: Int)
    {
        let rows = try await connection.query("""
            INSERT INTO activation_budgets (name_key, window_start) VALUES (\(key), \(now))
            ON CONFLICT (name_key) DO UPDATE SET name_key = excluded.name_key
            RETURNING window_start, codes_issued, failed_attempts
            """, logger: logger)
        var budget: (start: Date, codes: Int, failed: Int) = (now, 0, 0)
        for try await row in rows {
            do { budget = try row.decode((Date, Int, Int).self) } catch { throw Self.malformed("activation_budgets", error) }
        }
        guard now < budget.start.addingTimeInterval(Self.activationWindowSeconds) else { return (now, 0, 0) }
        return budget
    }

    private func writeActivationBudget(_ connection: AnsweredConnection, key: Data,
                                       _ budget: (start: Date, codes: Int, failed: Int)) async throws {
        try await connection.query("""
            UPDATE activation_budgets SET window_start = \(budget.start), codes_issued = \(budget.codes),
                failed_attempts = \(budget.failed)
            WHERE name_key = \(key)
            """, logger: logger)
    }

    public func issueActivationCode(_ code: ActivationCodeRecord, maxCodesPerHour: Int, now: Date) async throws -> ActivationIssue {
        let key = Data(key(of: code.user))
        let expired = now.addingTimeInterval(-Self.activationWindowSeconds)
        return try await inTransaction { connection in
            try await connection.query("""
                DELETE FROM activation_budgets WHERE name_key IN (
                    SELECT name_key FROM activation_budgets WHERE window_start < \(expired) FOR UPDATE SKIP LOCKED)
                """, logger: logger)
            var budget = try await lockActivationBudget(connection, key: key, now: now)
            guard budget.codes < maxCodesPerHour else { return .limitReached }
            budget.codes += 1
            try await writeActivationBudget(connection, key: key, budget)
            guard try await Self.count(connection.query(
                "SELECT 1 FROM users WHERE name = \(code.user) FOR SHARE", logger: logger
            )) == 1 else {
                return .issued(failedAttempts: budget.failed, stored: false)
            }
            try await Self.putActivationCode(connection, code, logger: logger)
            return .issued(failedAttempts: budget.failed, stored: true)
        }
    }

    public func reserveActivationAttempt(name: String, maxAttempts: Int, now: Date) async throws -> AttemptReservation {
        let key = Data(key(of: name))
        return try await inTransaction { connection in
            var budget = try await lockActivationBudget(connection, key: key, now: now)
            guard budget.failed < maxAttempts else {
                return .denied(blockedUntil: budget.start.addingTimeInterval(Self.activationWindowSeconds))
            }
            budget.failed += 1
            try await writeActivationBudget(connection, key: key, budget)
            return .granted(attemptsLeft: max(0, maxAttempts - budget.failed))
        }
    }

    public func consumeActivationCode(user: String, codeHash: String, now: Date) async throws -> Bool {
        let key = Data(key(of: user))
        return try await inTransaction { connection in
            let consumed = try await Self.count(connection.query("""
                DELETE FROM activation_codes WHERE user_name = \(user) AND code_hash = \(codeHash) AND expires_at > \(now)
                RETURNING 1
                """, logger: logger))
            guard consumed == 1 else { return false }
            try await connection.query(
                "UPDATE activation_budgets SET failed_attempts = 0 WHERE name_key = \(key)", logger: logger
            )
            return true
        }
    }
}
