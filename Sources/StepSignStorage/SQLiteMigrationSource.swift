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

    /// Every group membership as stored (SPEC §3.4), by group and user (byte order), with
    /// whether its seal checks under the source's key.
    public func groupMembers() throws -> [(member: GroupMember, sealed: Bool)] {
        let seal = store.credentialSeal
        return try store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT group_name, user_name, added_seq, seal FROM group_members ORDER BY group_name, user_name")
                .map { row in
                    do {
                        let member = GroupMember(group: try row.decode(forColumn: "group_name"), user: try row.decode(forColumn: "user_name"),
                                                 addedSeq: try row.decode(forColumn: "added_seq"))
                        let stored: Data? = try row.decode(forColumn: "seal")
                        return (member, seal.matches(stored.map { [UInt8]($0) }, seal.seal(member)))
                    } catch {
                        throw StorageError.malformedRow(table: "group_members", detail: "\(error)")
                    }
                }
        }
    }

    /// Every approval (vote) row of every request as stored, by request ID, with whether its
    /// own seal checks under the source's key. ``SQLiteStore/allApprovals()`` reads the
    /// requests themselves, checked.
    public func approvalVotes() throws -> [String: [(vote: ApprovalVote, sealed: Bool)]] {
        let seal = store.credentialSeal
        return try store.pool.read { db in
            var votes: [String: [(vote: ApprovalVote, sealed: Bool)]] = [:]
            for row in try Row.fetchAll(db, sql: """
                SELECT approval_id, approver, auth_level, authenticator, at, seal FROM approval_votes ORDER BY approval_id, at, rowid
                """) {
                do {
                    let id: String = try row.decode(forColumn: "approval_id")
                    let vote = ApprovalVote(approver: try row.decode(forColumn: "approver"), authLevel: try row.decode(forColumn: "auth_level"),
                                            authenticator: try row.decode(forColumn: "authenticator"),
                                            at: Date(storageSeconds: try row.decode(forColumn: "at")))
                    let stored: Data? = try row.decode(forColumn: "seal")
                    votes[id, default: []].append((vote, seal.matches(stored.map { [UInt8]($0) }, seal.seal(vote, approvalID: id))))
                } catch {
                    throw StorageError.malformedRow(table: "approval_votes", detail: "\(error)")
                }
            }
            return votes
        }
    }

    /// The log's index of events that name a request (`approval_events`): request ID and seq,
    /// by request ID (byte order) and seq. The requests' state seals are bound to their latest.
    public func approvalEvents() throws -> [ApprovalEventIndex] {
        try store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT approval_id, seq FROM approval_events ORDER BY approval_id, seq").map { row in
                do {
                    return ApprovalEventIndex(approvalID: try row.decode(forColumn: "approval_id"), seq: try row.decode(forColumn: "seq"))
                } catch {
                    throw StorageError.malformedRow(table: "approval_events", detail: "\(error)")
                }
            }
        }
    }

    /// Every stored `idempotencyKey` (SPEC §3), by peer uid and key (byte order), as it is.
    public func idempotencyKeys() throws -> [IdempotencyKeyRecord] {
        try store.pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT peer_uid, key, digest, signature_ids, done, pending_until, expires_at FROM idempotency_keys ORDER BY peer_uid, key
                """).map { row in
                do {
                    let ids: String = try row.decode(forColumn: "signature_ids")
                    return IdempotencyKeyRecord(peerUID: try row.decode(forColumn: "peer_uid"), key: try row.decode(forColumn: "key"),
                                                digest: try row.decode(forColumn: "digest"),
                                                signatureIDs: ids.split(separator: " ").map(String.init),
                                                done: try row.decode(forColumn: "done"),
                                                pendingUntil: Date(storageSeconds: try row.decode(forColumn: "pending_until")),
                                                expiresAt: Date(storageSeconds: try row.decode(forColumn: "expires_at")))
                } catch {
                    throw StorageError.malformedRow(table: "idempotency_keys", detail: "\(error)")
                }
            }
        }
    }

    /// Ends the transaction (nothing was written in it), releasing the lock, and closes the store.
    public func close() async throws {
        try? lock.inDatabase { db in try db.execute(sql: "ROLLBACK") }
        try lock.close()
        try await store.close()
    }
}
