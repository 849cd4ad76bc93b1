import Foundation
import GRDB

// Forgot-password activation codes.
extension SQLiteStore {
    public func putActivationCode(_ code: ActivationCodeRecord) async throws {
        try await pool.write { db in
            guard try Self.userExists(db, code.user) else { throw StorageError.noSuchUser(code.user) }
            try self.putActivationCode(db, code)
        }
    }

    /// Stores `code` with its seal (SPEC §5.4), replacing the user's earlier one.
    func putActivationCode(_ db: Database, _ code: ActivationCodeRecord) throws {
        try db.execute(
            sql: """
                INSERT INTO activation_codes (user_name, code_hash, verification_key, expires_at, failed_attempts, seal)
                VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (user_name) DO UPDATE SET
                    code_hash = excluded.code_hash,
                    verification_key = excluded.verification_key,
                    expires_at = excluded.expires_at,
                    failed_attempts = excluded.failed_attempts,
                    seal = excluded.seal
                """,
            arguments: [
                code.user, code.codeHash, code.verificationKey, code.expiresAt.storageSeconds,
                max(0, code.failedAttempts), Data(credentialSeal.seal(code)),
            ]
        )
    }

    /// The activation codes `filter` (an SQL `WHERE` clause) selects, with their seals.
    static func activationCodes(_ db: Database, _ filter: String,
                                arguments: StatementArguments = []) throws -> [(record: ActivationCodeRecord, seal: [UInt8]?)] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT user_name, code_hash, verification_key, expires_at, failed_attempts, seal
                FROM activation_codes \(filter)
                """,
            arguments: arguments
        ).map { row in
            do {
                return (ActivationCodeRecord(
                    user: try row.decode(forColumn: "user_name"),
                    codeHash: try row.decode(forColumn: "code_hash"),
                    verificationKey: try row.decode(forColumn: "verification_key"),
                    expiresAt: Date(storageSeconds: try row.decode(forColumn: "expires_at")),
                    failedAttempts: try row.decode(forColumn: "failed_attempts")
                ), (try row.decode(Data?.self, forColumn: "seal")).map { [UInt8]($0) })
            } catch {
                throw StorageError.malformedRow(table: "activation_codes", detail: "\(error)")
            }
        }
    }

    /// The user's open code if its seal holds (a code written into the database by hand is
    /// never used).
    public func activationCode(user: String) async throws -> ActivationCodeRecord? {
        try await pool.read { db in
            guard let code = try Self.activationCodes(db, "WHERE user_name = ?", arguments: [user]).first,
                  self.credentialSeal.verifies(code.record, seal: code.seal) else { return nil }
            return code.record
        }
    }

    @discardableResult
    public func deleteActivationCode(user: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM activation_codes WHERE user_name = ?", arguments: [user])
            return db.changesCount > 0
        }
    }

    // MARK: The hourly budget (SPEC §5.1)

    /// The length of an activation-code budget's window.
    static let activationWindowSeconds: TimeInterval = 3600

    /// The name's budget at `now`: (window start, codes issued, wrong codes); a window that
    /// ended starts over.
    private func activationBudget(_ db: Database, key: Data, now: Date) throws -> (start: Double, codes: Int, failed: Int) {
        let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT window_start, codes_issued, failed_attempts FROM activation_budgets WHERE name_key = ?"),
            arguments: [key]
        )
        guard let row else { return (now.storageSeconds, 0, 0) }
        do {
            let start: Double = try row.decode(forColumn: "window_start")
            guard now.storageSeconds < start + Self.activationWindowSeconds else { return (now.storageSeconds, 0, 0) }
            return (start, try row.decode(forColumn: "codes_issued"), try row.decode(forColumn: "failed_attempts"))
        } catch {
            throw StorageError.malformedRow(table: "activation_budgets", detail: "\(error)")
        }
    }

    private func writeActivationBudget(_ db: Database, key: Data, _ budget: (start: Double, codes: Int, failed: Int)) throws {
        try db.cachedStatement(sql: """
            INSERT INTO activation_budgets (name_key, window_start, codes_issued, failed_attempts) VALUES (?, ?, ?, ?)
            ON CONFLICT (name_key) DO UPDATE SET window_start = excluded.window_start,
                codes_issued = excluded.codes_issued, failed_attempts = excluded.failed_attempts
            """)
            .execute(arguments: [key, budget.start, budget.codes, budget.failed])
    }

    public func issueActivationCode(_ code: ActivationCodeRecord, maxCodesPerHour: Int, now: Date) async throws -> ActivationIssue {
        try await pool.write { db in
            try db.cachedStatement(sql: "DELETE FROM activation_budgets WHERE window_start < ?")
                .execute(arguments: [now.storageSeconds - Self.activationWindowSeconds])
            let key = self.key(of: code.user)
            var budget = try self.activationBudget(db, key: key, now: now)
            guard budget.codes < maxCodesPerHour else { return .limitReached }
            budget.codes += 1
            try self.writeActivationBudget(db, key: key, budget)
            guard try Self.userExists(db, code.user) else { return .issued(failedAttempts: budget.failed, stored: false) }
            try self.putActivationCode(db, code)
            return .issued(failedAttempts: budget.failed, stored: true)
        }
    }

    public func reserveActivationAttempt(name: String, maxAttempts: Int, now: Date) async throws -> AttemptReservation {
        try await pool.write { db in
            let key = self.key(of: name)
            var budget = try self.activationBudget(db, key: key, now: now)
            guard budget.failed < maxAttempts else {
                return .denied(blockedUntil: Date(storageSeconds: budget.start + Self.activationWindowSeconds))
            }
            budget.failed += 1
            try self.writeActivationBudget(db, key: key, budget)
            return .granted(attemptsLeft: max(0, maxAttempts - budget.failed))
        }
    }

    public func consumeActivationCode(user: String, codeHash: String, now: Date) async throws -> Bool {
        try await pool.write { db in
            guard let code = try Self.activationCodes(db, "WHERE user_name = ?", arguments: [user]).first,
                  code.record.codeHash == codeHash, code.record.expiresAt > now,
                  self.credentialSeal.verifies(code.record, seal: code.seal) else { return false }
            try db.execute(sql: "DELETE FROM activation_codes WHERE user_name = ?", arguments: [user])
            guard db.changesCount == 1 else { return false }
            try db.execute(sql: "UPDATE activation_budgets SET failed_attempts = 0 WHERE name_key = ?",
                           arguments: [self.key(of: user)])
            return true
        }
    }
}
