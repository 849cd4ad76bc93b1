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
            try await Self.putActivationCode(connection, code, seal: credentialSeal, logger: logger)
        }
    }

    /// Stores `code` with its seal (SPEC §5.4), replacing the user's earlier one.
    static func putActivationCode(_ connection: AnsweredConnection, _ code: ActivationCodeRecord, seal: CredentialSeal,
                                  logger: Logger) async throws {
        var code = code
        code.expiresAt = stored(code.expiresAt)  // sealed as it will read back
        let sealed = Data(seal.seal(code))
        try await connection.query("""
            INSERT INTO activation_codes (user_name, code_hash, verification_key, expires_at, failed_attempts, seal)
            VALUES (\(code.user), \(code.codeHash), \(code.verificationKey), \(code.expiresAt), \(max(0, code.failedAttempts)),
                \(sealed))
            ON CONFLICT (user_name) DO UPDATE SET
                code_hash = excluded.code_hash,
                verification_key = excluded.verification_key,
                expires_at = excluded.expires_at,
                failed_attempts = excluded.failed_attempts,
                seal = excluded.seal
            """, logger: logger)
    }

    /// The open activation codes of `user` (nil: everyone's), only those without a seal if
    /// `unsealedOnly`, with their seals. `lock`: held until the transaction ends.
    static func activationCodes(_ connection: AnsweredConnection, unsealedOnly: Bool, user: String?, lock: Bool = false,
                                logger: Logger) async throws -> [(record: ActivationCodeRecord, seal: [UInt8]?)] {
        let rows = try await connection.query(lock ? """
            SELECT user_name, code_hash, verification_key, expires_at, failed_attempts, seal FROM activation_codes
            WHERE (\(user)::text IS NULL OR user_name = \(user)) AND (NOT \(unsealedOnly) OR seal IS NULL) FOR UPDATE
            """ : """
            SELECT user_name, code_hash, verification_key, expires_at, failed_attempts, seal FROM activation_codes
            WHERE (\(user)::text IS NULL OR user_name = \(user)) AND (NOT \(unsealedOnly) OR seal IS NULL)
            """, logger: logger)
        var codes: [(record: ActivationCodeRecord, seal: [UInt8]?)] = []
        for try await row in rows {
            do {
                let (user, hash, key, expires, failed, seal) = try row.decode((String, String, String, Date, Int, Data?).self)
                codes.append((ActivationCodeRecord(user: user, codeHash: hash, verificationKey: key, expiresAt: expires,
                                                   failedAttempts: failed), seal.map { [UInt8]($0) }))
            } catch {
                throw Self.malformed("activation_codes", error)
            }
        }
        return codes
    }

    /// The user's open code if its seal holds (a code written into the database by hand is
    /// never used).
    public func activationCode(user: String) async throws -> ActivationCodeRecord? {
        try await withConnection { connection in
            guard let code = try await Self.activationCodes(connection, unsealedOnly: false, user: user, logger: logger).first,
                  credentialSeal.verifies(code.record, seal: code.seal) else { return nil }
            return code.record
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
            try await Self.putActivationCode(connection, code, seal: credentialSeal, logger: logger)
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
            // The row is locked, its seal checked, then it is deleted: of concurrent right
            // answers exactly one finds it.
            guard let code = try await Self.activationCodes(connection, unsealedOnly: false, user: user, lock: true,
                                                            logger: logger).first,
                  code.record.codeHash == codeHash, code.record.expiresAt > now,
                  credentialSeal.verifies(code.record, seal: code.seal) else { return false }
            let consumed = try await Self.count(connection.query(
                "DELETE FROM activation_codes WHERE user_name = \(user) RETURNING 1", logger: logger
            ))
            guard consumed == 1 else { return false }
            try await connection.query(
                "UPDATE activation_budgets SET failed_attempts = 0 WHERE name_key = \(key)", logger: logger
            )
            return true
        }
    }
}
