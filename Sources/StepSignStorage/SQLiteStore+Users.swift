import Foundation
import GRDB

// Users, attempt counters and passwords.
extension SQLiteStore {
    static let userColumns = """
        name, password_hash, password_changed_at, password_expired, must_change_password, \
        failed_attempts, blocked, blocked_until, created_at, credential_token
        """

    static func decodeUser(_ row: Row) throws -> UserRecord {
        do {
            return UserRecord(
                name: try row.decode(forColumn: "name"),
                passwordHash: try row.decode(forColumn: "password_hash"),
                passwordChangedAt: Date(storageSeconds: try row.decode(forColumn: "password_changed_at")),
                passwordExpired: try row.decode(forColumn: "password_expired"),
                mustChangePassword: try row.decode(forColumn: "must_change_password"),
                failedAttempts: try row.decode(forColumn: "failed_attempts"),
                blocked: try row.decode(forColumn: "blocked"),
                blockedUntil: (try row.decode(Double?.self, forColumn: "blocked_until")).map(Date.init(storageSeconds:)),
                createdAt: Date(storageSeconds: try row.decode(forColumn: "created_at")),
                credentialToken: CredentialToken(bytes: try row.decode(forColumn: "credential_token"))
            )
        } catch {
            throw StorageError.malformedRow(table: "users", detail: "\(error)")
        }
    }

    static func userExists(_ db: Database, _ name: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM users WHERE name = ?)"),
            arguments: [name]
        ) ?? false
    }

    /// The user with the row's seal checked against the row and the log (the history and
    /// device keys are checked where they are read: ``deviceKeys(user:includeRevoked:)``,
    /// ``passwordHistory(user:limit:)``, and by every attempt).
    public func user(named name: String) async throws -> UserRecord? {
        try await pool.read { db in
            let statement = try db.cachedStatement(sql: "\(Self.sealedUserSelect) WHERE name = ?")
            return try Row.fetchOne(statement, arguments: [name]).map { try self.decodeSealedUser($0) }
        }
    }

    public func addUser(_ new: NewUser) async throws {
        try await pool.write { db in
            guard try !Self.userExists(db, new.name) else { throw StorageError.userExists(new.name) }
            // No twin (SPEC §3): checked and inserted in one write transaction, which SQLite
            // runs one at a time.
            let key = UserIDForm.lookalikeKey(new.name)
            if let existing = try String.fetchOne(db.cachedStatement(sql: "SELECT name FROM users WHERE name_key = ? LIMIT 1"),
                                                  arguments: [key]) {
                throw StorageError.userLookalike(new.name, existing: existing)
            }
            try db.execute(
                sql: """
                    INSERT INTO users (name, password_hash, password_changed_at, must_change_password, created_at,
                        credential_token, name_key)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    new.name, new.passwordHash, new.createdAt.storageSeconds, new.mustChangePassword,
                    new.createdAt.storageSeconds, try CredentialToken.random().bytes, key,
                ]
            )
            // Bound to the name's latest event: a user added again after a removal is not
            // taken for a rollback of the removed one.
            try self.reseal(db, new.name)
            try self.dropReservations(db, name: new.name)
        }
    }

    public func removeUser(named name: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM users WHERE name = ?", arguments: [name])
            guard db.changesCount > 0 else { return false }
            try self.dropReservations(db, name: name)
            return true
        }
    }

    /// Every user, each checked whole (row, log binding, history and device keys).
    public func listUsers() async throws -> [UserRecord] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "\(Self.sealedUserSelect) ORDER BY name").map { row in
                let name: String = try Self.decodeUser(row).name
                return try self.decodeSealedUser(row, parts: try Self.partDigests(db, name))
            }
        }
    }

    public func unlockUser(named name: String) async throws -> Bool {
        try await pool.write { db in
            try self.requireSealed(db, name)
            try db.execute(
                sql: "UPDATE users SET blocked = 0, blocked_until = NULL, failed_attempts = 0 WHERE name = ?",
                arguments: [name]
            )
            guard db.changesCount > 0 else { return false }
            try self.dropReservations(db, name: name)
            try self.reseal(db, name)
            return true
        }
    }

    public func expirePassword(named name: String) async throws -> Bool {
        try await pool.write { db in
            try self.requireSealed(db, name)
            try db.execute(sql: "UPDATE users SET password_expired = 1, credential_token = ? WHERE name = ?",
                           arguments: [try CredentialToken.random().bytes, name])
            guard db.changesCount > 0 else { return false }
            try self.reseal(db, name)
            return true
        }
    }

    // MARK: Passwords

    @discardableResult
    public func setPassword(user: String, hash: String, at: Date, historyLimit: Int) async throws -> CredentialToken {
        let historyLimit = max(0, historyLimit)
        let token = try CredentialToken.random()
        return try await pool.write { db in
            try self.requireSealed(db, user)
            guard let row = try Row.fetchOne(
                db,
                sql: "SELECT password_hash, password_changed_at FROM users WHERE name = ?",
                arguments: [user]
            ) else {
                throw StorageError.noSuchUser(user)
            }
            if historyLimit > 0 {
                let oldHash: String
                let oldSetAt: Double
                do {
                    oldHash = try row.decode(forColumn: "password_hash")
                    oldSetAt = try row.decode(forColumn: "password_changed_at")
                } catch {
                    throw StorageError.malformedRow(table: "users", detail: "\(error)")
                }
                try db.execute(
                    sql: "INSERT INTO password_history (user_name, hash, set_at) VALUES (?, ?, ?)",
                    arguments: [user, oldHash, oldSetAt]
                )
            }
            try db.execute(
                sql: """
                    UPDATE users SET password_hash = ?, password_changed_at = ?,
                        password_expired = 0, must_change_password = 0, credential_token = ?
                    WHERE name = ?
                    """,
                arguments: [hash, at.storageSeconds, token.bytes, user]
            )
            try db.execute(
                sql: """
                    DELETE FROM password_history WHERE user_name = ? AND id NOT IN (
                        SELECT id FROM password_history WHERE user_name = ? ORDER BY id DESC LIMIT ?)
                    """,
                arguments: [user, user, historyLimit]
            )
            try self.reseal(db, user)
            return token
        }
    }

    public func rehashPassword(user: String, expected: String, replacement: String) async throws -> Bool {
        try await pool.write { db in
            guard try self.sealFailure(db, user) == nil else { return false }
            try db.execute(
                sql: "UPDATE users SET password_hash = ? WHERE name = ? AND password_hash = ?",
                arguments: [replacement, user, expected]
            )
            guard db.changesCount > 0 else { return false }
            try self.reseal(db, user)
            return true
        }
    }

    public func passwordHistory(user: String, limit: Int) async throws -> [String] {
        guard limit > 0 else { return [] }
        return try await pool.read { db in
            guard let record = try self.checkedUser(db, user) else { return [] }
            if let failure = record.sealFailure { throw StorageError.recordSealBroken(user: user, failure) }
            let current = record.passwordHash
            let earlier = try String.fetchAll(
                db,
                sql: "SELECT hash FROM password_history WHERE user_name = ? ORDER BY id DESC LIMIT ?",
                arguments: [user, limit - 1]
            )
            return [current] + earlier
        }
    }

    /// The upgrade (schema v13): every user's lookalike key, for users added before keys were kept.
    static func fillNameKeys(_ db: Database) throws {
        for name in try String.fetchAll(db, sql: "SELECT name FROM users WHERE name_key IS NULL") {
            try db.execute(sql: "UPDATE users SET name_key = ? WHERE name = ?", arguments: [UserIDForm.lookalikeKey(name), name])
        }
    }
}
