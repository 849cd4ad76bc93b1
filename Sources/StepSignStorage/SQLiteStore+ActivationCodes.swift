import Foundation
import GRDB

// Forgot-password activation codes.
extension SQLiteStore {
    public func putActivationCode(_ code: ActivationCodeRecord) async throws {
        try await pool.write { db in
            guard try Self.userExists(db, code.user) else { throw StorageError.noSuchUser(code.user) }
            try db.execute(
                sql: """
                    INSERT INTO activation_codes (user_name, code_hash, verification_key, expires_at, failed_attempts)
                    VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (user_name) DO UPDATE SET
                        code_hash = excluded.code_hash,
                        verification_key = excluded.verification_key,
                        expires_at = excluded.expires_at,
                        failed_attempts = excluded.failed_attempts
                    """,
                arguments: [
                    code.user, code.codeHash, code.verificationKey, code.expiresAt.storageSeconds,
                    max(0, code.failedAttempts),
                ]
            )
        }
    }

    public func activationCode(user: String) async throws -> ActivationCodeRecord? {
        try await pool.read { db in
            guard let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT user_name, code_hash, verification_key, expires_at, failed_attempts
                    FROM activation_codes WHERE user_name = ?
                    """,
                arguments: [user]
            ) else {
                return nil
            }
            do {
                return ActivationCodeRecord(
                    user: try row.decode(atIndex: 0),
                    codeHash: try row.decode(atIndex: 1),
                    verificationKey: try row.decode(atIndex: 2),
                    expiresAt: Date(storageSeconds: try row.decode(atIndex: 3)),
                    failedAttempts: try row.decode(atIndex: 4)
                )
            } catch {
                throw StorageError.malformedRow(table: "activation_codes", detail: "\(error)")
            }
        }
    }

    public func recordFailedActivationAttempt(user: String) async throws -> Int? {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE activation_codes SET failed_attempts = failed_attempts + 1 WHERE user_name = ?",
                arguments: [user]
            )
            guard db.changesCount > 0 else { return nil }
            return try Int.fetchOne(
                db, sql: "SELECT failed_attempts FROM activation_codes WHERE user_name = ?", arguments: [user]
            )
        }
    }

    @discardableResult
    public func deleteActivationCode(user: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM activation_codes WHERE user_name = ?", arguments: [user])
            return db.changesCount > 0
        }
    }
}
