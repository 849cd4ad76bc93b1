import Foundation
import Logging
import PostgresNIO
import StepSignCrypto
import StepSignStorage

// Users and passwords.
extension PostgresStore {
    static let userColumns = """
        name, password_hash, password_changed_at, password_expired, must_change_password, \
        failed_attempts, blocked, blocked_until, created_at, credential_token
        """

    static func decodeUser(_ row: PostgresRow) throws -> UserRecord {
        do {
            let (name, hash, changedAt, expired, mustChange, failed, blocked, blockedUntil, createdAt, token) =
                try row.decode((String, String, Date, Bool, Bool, Int, Bool, Date?, Date, Data).self)
            return UserRecord(
                name: name, passwordHash: hash, passwordChangedAt: changedAt, passwordExpired: expired,
                mustChangePassword: mustChange, failedAttempts: failed, blocked: blocked,
                blockedUntil: blockedUntil, createdAt: createdAt, credentialToken: CredentialToken(bytes: token)
            )
        } catch {
            throw malformed("users", error)
        }
    }

    /// The user with the row's seal checked against the row and the log, in one statement
    /// (the history and device keys are checked where they are read, and by every attempt).
    public func user(named name: String) async throws -> UserRecord? {
        try await withConnection { connection in
            let rows = try await connection.query(
                "SELECT \(unescaped: Self.sealedUserColumns) FROM users WHERE name = \(name)", logger: logger
            )
            for try await row in rows { return Self.checked(try Self.decodeStoredUser(row), seal: credentialSeal) }
            return nil
        }
    }

    public func addUser(_ new: NewUser) async throws {
        let token = try CredentialToken.random()
        let key = UserIDForm.lookalikeKey(new.name)
        try await inTransaction { connection in
            // No twin (SPEC §3), whichever daemon adds it: adds of one lookalike key take turns
            // under a transaction lock on it, so the check below sees any committed before.
            try await connection.query(
                "SELECT pg_advisory_xact_lock(\(Self.lookalikeLockKey(key)))", logger: logger)
            let existing = try await connection.query(
                "SELECT name FROM users WHERE name_key = \(key) AND name <> \(new.name) LIMIT 1", logger: logger
            ).decode(String.self).first { _ in true }
            if let existing { throw StorageError.userLookalike(new.name, existing: existing) }
            let added = try await Self.count(connection.query("""
                INSERT INTO users (name, password_hash, password_changed_at, must_change_password, created_at,
                    credential_token, name_key)
                VALUES (\(new.name), \(new.passwordHash), \(new.createdAt), \(new.mustChangePassword), \(new.createdAt),
                    \(token.bytes), \(key))
                ON CONFLICT (name) DO NOTHING RETURNING 1
                """, logger: logger))
            guard added == 1 else { throw StorageError.userExists(new.name) }
            // Bound to the name's latest event: a user added again after a removal is not
            // taken for a rollback of the removed one.
            try await Self.reseal(connection, new.name, seal: credentialSeal, logger: logger)
            try await dropReservations(connection, name: new.name)
        }
    }

    public func removeUser(named name: String) async throws -> Bool {
        try await inTransaction { connection in
            guard try await Self.count(connection.query("DELETE FROM users WHERE name = \(name) RETURNING 1", logger: logger)) > 0
            else { return false }
            try await dropReservations(connection, name: name)
            return true
        }
    }

    /// Every user, each checked whole (row, log binding, history and device keys), in one
    /// snapshot and four statements, however many users there are.
    public func listUsers() async throws -> [UserRecord] {
        try await inSnapshot { connection in
            var stored: [StoredUser] = []
            // Byte order, whatever the database's collation.
            let rows = try await connection.query(
                "SELECT \(unescaped: Self.sealedUserColumns) FROM users ORDER BY name COLLATE \"C\"", logger: logger
            )
            for try await row in rows { stored.append(try Self.decodeStoredUser(row)) }
            let parts = try await Self.allPartDigests(connection, logger: logger)
            let none = (history: CredentialSeal.historyDigest([]), deviceKeys: CredentialSeal.deviceKeysDigest([]))
            return stored.map { user in Self.checked(user, seal: credentialSeal, parts: parts[user.user.name] ?? none) }
        }
    }

    public func unlockUser(named name: String) async throws -> Bool {
        try await changeSealedRecord(name) { connection in
            try await connection.query(
                "UPDATE users SET blocked = false, blocked_until = NULL, failed_attempts = 0 WHERE name = \(name)",
                logger: logger
            )
            try await dropReservations(connection, name: name)
        }
    }

    public func expirePassword(named name: String) async throws -> Bool {
        let token = try CredentialToken.random()
        return try await changeSealedRecord(name) { connection in
            try await connection.query(
                "UPDATE users SET password_expired = true, credential_token = \(token.bytes) WHERE name = \(name)",
                logger: logger
            )
        }
    }

    // MARK: Passwords

    @discardableResult
    public func setPassword(user: String, hash: String, at: Date, historyLimit: Int) async throws -> CredentialToken {
        let historyLimit = max(0, historyLimit)
        let token = try CredentialToken.random()
        try await inTransaction { connection in
            guard try await lockSealed(connection, user) else { throw StorageError.noSuchUser(user) }
            let rows = try await connection.query(
                "SELECT password_hash, password_changed_at FROM users WHERE name = \(user)", logger: logger
            )
            var old: (String, Date)?
            for try await row in rows {
                do { old = try row.decode((String, Date).self) } catch { throw Self.malformed("users", error) }
            }
            guard let old else { throw StorageError.noSuchUser(user) }
            if historyLimit > 0 {
                try await connection.query(
                    "INSERT INTO password_history (user_name, hash, set_at) VALUES (\(user), \(old.0), \(old.1))",
                    logger: logger
                )
            }
            try await connection.query("""
                UPDATE users SET password_hash = \(hash), password_changed_at = \(at),
                    password_expired = false, must_change_password = false, credential_token = \(token.bytes)
                WHERE name = \(user)
                """, logger: logger)
            try await connection.query("""
                DELETE FROM password_history WHERE user_name = \(user) AND id NOT IN (
                    SELECT id FROM password_history WHERE user_name = \(user) ORDER BY id DESC LIMIT \(historyLimit))
                """, logger: logger)
            try await Self.reseal(connection, user, seal: credentialSeal, logger: logger)
        }
        return token
    }

    public func rehashPassword(user: String, expected: String, replacement: String) async throws -> Bool {
        do {
            return try await inTransaction { connection in
                guard try await lockSealed(connection, user) else { return false }
                let changed = try await Self.count(connection.query("""
                    UPDATE users SET password_hash = \(replacement) WHERE name = \(user) AND password_hash = \(expected) RETURNING 1
                    """, logger: logger)) > 0
                if changed { try await Self.reseal(connection, user, seal: credentialSeal, logger: logger) }
                return changed
            }
        } catch StorageError.recordSealBroken {
            return false
        }
    }

    public func passwordHistory(user: String, limit: Int) async throws -> [String] {
        guard limit > 0 else { return [] }
        return try await inSnapshot { connection in
            guard let record = try await Self.checkedUser(connection, user, seal: credentialSeal, lock: false,
                                                          logger: logger) else { return [] }
            if let failure = record.sealFailure { throw StorageError.recordSealBroken(user: user, failure) }
            let rows = try await connection.query("""
                SELECT hash FROM password_history WHERE user_name = \(user) ORDER BY id DESC LIMIT \(limit - 1)
                """, logger: logger)
            var hashes = [record.passwordHash]
            for try await hash in rows.decode(String.self) { hashes.append(hash) }
            return hashes
        }
    }

    /// The `pg_advisory_xact_lock` key of a lookalike key: its SHA-256's first 8 bytes.
    static func lookalikeLockKey(_ key: String) -> Int64 {
        SHA256.hash(Array("stepsign-user-lookalike-lock-v1\n\(key)".utf8)).prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }

    /// Every user's lookalike key where it is not kept yet: the upgrade (schema v13) and an import.
    static func fillNameKeys(_ connection: AnsweredConnection, logger: Logger) async throws {
        var names: [String] = []
        for try await name in try await connection.query("SELECT name FROM users WHERE name_key IS NULL", logger: logger)
            .decode(String.self) { names.append(name) }
        for name in names {
            try await connection.query("UPDATE users SET name_key = \(UserIDForm.lookalikeKey(name)) WHERE name = \(name)",
                                       logger: logger)
        }
    }
}
