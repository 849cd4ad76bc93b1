import Foundation
import GRDB

/// An existing SQLite store held still while `stepsign admin migrate` copies it elsewhere.
///
/// ``open(path:)`` opens the store (bringing an older schema up to date, as the daemon would)
/// and then takes SQLite's write lock on a connection of its own (`BEGIN IMMEDIATE`), which it
/// holds until ``close()``. While it is held no process can commit to the file, so every read
/// through ``store`` (``SQLiteStore``'s own queries, which see the last commit) and through
/// ``passwordHistory()`` comes from the same state: one consistent snapshot, however long the
/// copy takes. A daemon still running on the file meanwhile waits, then fails its writes
/// (SQLite's busy timeout); it should be stopped first, since what it writes after the copy
/// is not copied.
public final class SQLiteMigrationSource: Sendable {
    /// The store, for reading (its write methods would wait on the lock held here, then fail).
    public let store: SQLiteStore
    private let lock: DatabaseQueue

    private init(store: SQLiteStore, lock: DatabaseQueue) {
        self.store = store
        self.lock = lock
    }

    /// Opens the SQLite database at `path` and takes its write lock. Throws
    /// ``StorageError/stateFile(path:errno:)`` with `ENOENT` when there is no such file (it is
    /// never created), or the SQLite error when the lock cannot be had within
    /// ``SQLiteStore/busyTimeout``.
    ///
    /// `seal` and `sealUnsealed` as for ``SQLiteStore/open(path:seal:sealUnsealed:)``: the
    /// daemon's seal key, so that every record is checked as it is read.
    public static func open(path: String, seal: CredentialSeal, sealUnsealed: Bool) throws -> SQLiteMigrationSource {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StorageError.stateFile(path: path, errno: ENOENT)
        }
        let store = try SQLiteStore.open(path: path, seal: seal, sealUnsealed: sealUnsealed)
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(SQLiteStore.busyTimeout)
            configuration.label = "stepsign-migration-lock"
            // The transaction stays open across calls until close().
            configuration.allowsUnsafeTransactions = true
            let lock = try DatabaseQueue(path: path, configuration: configuration)
            do {
                try lock.inDatabase { db in try db.execute(sql: "BEGIN IMMEDIATE") }
            } catch {
                try? lock.close()
                throw error
            }
            return SQLiteMigrationSource(store: store, lock: lock)
        } catch {
            try? store.pool.close()
            throw error
        }
    }

    /// Every user's earlier password hashes, user by user in the order they were stored
    /// (oldest first); the current hashes are in the users' records.
    public func passwordHistory() throws -> [PasswordHistoryEntry] {
        try store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT user_name, hash, set_at FROM password_history ORDER BY id").map { row in
                do {
                    return PasswordHistoryEntry(user: try row.decode(forColumn: "user_name"), hash: try row.decode(forColumn: "hash"),
                                                setAt: Date(storageSeconds: try row.decode(forColumn: "set_at")))
                } catch {
                    throw StorageError.malformedRow(table: "password_history", detail: "\(error)")
                }
            }
        }
    }

    /// Every device key of every user, revoked ones included, in the order they were enrolled.
    public func deviceKeys() throws -> [DeviceKeyRecord] {
        try store.pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT kid, user_name, public_key_jwk, label, created_at, revoked_at FROM device_keys ORDER BY created_at, rowid
                """).map(SQLiteStore.decodeDeviceKey)
        }
    }

    /// The FIDO2 credentials of the device keys that are security keys (SPEC §5.7), by kid.
    public func fido2Credentials() throws -> [String: FIDO2Credential] {
        try store.pool.read { db in
            var credentials: [String: FIDO2Credential] = [:]
            for row in try Row.fetchAll(db, sql: """
                SELECT kid, fido2_credential_id, fido2_sign_count FROM device_keys WHERE fido2_credential_id IS NOT NULL
                """) {
                credentials[row["kid"]] = FIDO2Credential(credentialID: row["fido2_credential_id"],
                                                          signCount: UInt32(clamping: row["fido2_sign_count"] as Int64))
            }
            return credentials
        }
    }

    /// Ends the transaction (nothing was written in it), releasing the lock, and closes the store.
    public func close() async throws {
        try? lock.inDatabase { db in try db.execute(sql: "ROLLBACK") }
        try lock.close()
        try await store.close()
    }
}
