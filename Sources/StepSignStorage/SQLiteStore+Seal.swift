import Foundation
import GRDB
import StepSignCrypto

// Sealed credential records (SPEC §5.4). Every read of a user checks the record against its
// seal and the log; every write that changes a sealed field checks the record first (a
// broken one is not changed: resealing it would make what someone wrote behind the daemon's
// back look genuine) and seals it again in the same transaction.
extension SQLiteStore {
    /// The columns a user's seal lives in, after ``userColumns``.
    static let sealColumns = "event_index, history_digest, device_keys_digest, seal"

    /// The seq of the user's latest event in the ledger (an index lookup: `ledger_user_events`).
    static let latestEventSeq = "(SELECT max(seq) FROM ledger WHERE auth_level < 0 AND user_name = users.name)"

    /// A user's row with everything its seal is checked against.
    static let sealedUserSelect = "SELECT \(userColumns), \(sealColumns), \(latestEventSeq) AS latest_event FROM users"

    /// The user of a row selected with ``sealedUserSelect``, with ``UserRecord/sealFailure``
    /// set from the row alone (`parts` given: the history's and device keys' digests as stored
    /// now, checked too).
    func decodeSealedUser(_ row: Row, parts: (history: [UInt8], deviceKeys: [UInt8])? = nil) throws -> UserRecord {
        var user = try Self.decodeUser(row)
        let binding: SealBinding
        let stored: [UInt8]?
        do {
            binding = SealBinding(
                eventIndex: try row.decode(forColumn: "event_index"),
                historyDigest: [UInt8](try row.decode(Data?.self, forColumn: "history_digest") ?? Data()),
                deviceKeysDigest: [UInt8](try row.decode(Data?.self, forColumn: "device_keys_digest") ?? Data())
            )
            stored = (try row.decode(Data?.self, forColumn: "seal")).map { [UInt8]($0) }
        } catch {
            throw StorageError.malformedRow(table: "users", detail: "\(error)")
        }
        let latest = try Self.latestEventIndex(row)
        if let parts {
            user.sealFailure = credentialSeal.failure(of: user, binding: binding, seal: stored, latestEventIndex: latest,
                                                      historyDigest: parts.history, deviceKeysDigest: parts.deviceKeys)
        } else {
            user.sealFailure = credentialSeal.failure(of: user, binding: binding, seal: stored, latestEventIndex: latest)
        }
        return user
    }

    /// The log index of the user's latest event in a row selected with ``sealedUserSelect``
    /// (-1: none).
    static func latestEventIndex(_ row: Row) throws -> Int64 {
        do {
            return (try row.decode(Int64?.self, forColumn: "latest_event")).map { $0 - 1 } ?? SealBinding.noEvent
        } catch {
            throw StorageError.malformedRow(table: "users", detail: "\(error)")
        }
    }

    /// The user called `name` checked whole: the row, its binding to the log, and the history
    /// and device keys stored beside it. Nil if there is no such user.
    func checkedUser(_ db: Database, _ name: String) throws -> UserRecord? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "\(Self.sealedUserSelect) WHERE name = ?"),
                                         arguments: [name]) else { return nil }
        return try decodeSealedUser(row, parts: try Self.partDigests(db, name))
    }

    /// Why `name`'s record may not be used or changed, or nil (also when there is no such user).
    func sealFailure(_ db: Database, _ name: String) throws -> SealFailure? {
        try checkedUser(db, name)?.sealFailure
    }

    /// Throws ``StorageError/recordSealBroken(user:_:)`` if `name`'s record fails its check.
    func requireSealed(_ db: Database, _ name: String) throws {
        if let failure = try sealFailure(db, name) { throw StorageError.recordSealBroken(user: name, failure) }
    }

    /// Seals `name`'s record as it is stored now, bound to the user's latest event in the
    /// ledger and to the history and device keys stored now. Call only on a record that
    /// passed its check in the same transaction, after changing it.
    func reseal(_ db: Database, _ name: String) throws {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "\(Self.sealedUserSelect) WHERE name = ?"),
                                         arguments: [name]) else { return }
        let user = try Self.decodeUser(row)
        let latest = try Self.latestEventIndex(row)
        let parts = try Self.partDigests(db, name)
        let binding = SealBinding(eventIndex: latest, historyDigest: parts.history, deviceKeysDigest: parts.deviceKeys)
        try db.cachedStatement(sql: """
            UPDATE users SET event_index = ?, history_digest = ?, device_keys_digest = ?, seal = ? WHERE name = ?
            """).execute(arguments: [latest, Data(parts.history), Data(parts.deviceKeys),
                                     Data(credentialSeal.seal(user, binding: binding)), name])
    }

    /// The digests of `name`'s password history and device keys as stored now.
    static func partDigests(_ db: Database, _ name: String) throws -> (history: [UInt8], deviceKeys: [UInt8]) {
        let history = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT hash, set_at FROM password_history WHERE user_name = ? ORDER BY id"),
            arguments: [name]
        ).map { row -> (hash: String, setAt: Date) in
            do {
                return (try row.decode(forColumn: "hash"), Date(storageSeconds: try row.decode(forColumn: "set_at")))
            } catch {
                throw StorageError.malformedRow(table: "password_history", detail: "\(error)")
            }
        }
        let keys = try Row.fetchAll(
            db.cachedStatement(sql: """
                SELECT kid, user_name, public_key_jwk, label, created_at, revoked_at FROM device_keys WHERE user_name = ?
                """),
            arguments: [name]
        ).map(decodeDeviceKey)
        return (CredentialSeal.historyDigest(history), CredentialSeal.deviceKeysDigest(keys))
    }

    // MARK: Opening

    /// Checks the seal key against the database's `seal_check`, or, the first time a key
    /// meets this database, records it and, when `sealUnsealed`, seals every record that has
    /// no seal yet (the upgrade: those were written before seals existed). Later, a record
    /// without a seal is never sealed: it fails as ``SealFailure/missing``.
    func prepareSeal(sealUnsealed: Bool) throws {
        try pool.write { db in
            let stored = try Data.fetchOne(db, sql: "SELECT value FROM store_secrets WHERE name = 'seal_check'")
            if let stored {
                guard ConstantTime.equals([UInt8](stored), credentialSeal.keyCheck) else { throw StorageError.sealKeyMismatch }
                return
            }
            if sealUnsealed {
                for name in try String.fetchAll(db, sql: "SELECT name FROM users WHERE seal IS NULL") {
                    try reseal(db, name)
                }
                for code in try Self.activationCodes(db, "WHERE seal IS NULL") {
                    try db.execute(sql: "UPDATE activation_codes SET seal = ? WHERE user_name = ?",
                                   arguments: [Data(credentialSeal.seal(code.record)), code.record.user])
                }
            }
            try db.execute(sql: "INSERT INTO store_secrets (name, value) VALUES ('seal_check', ?)",
                           arguments: [Data(credentialSeal.keyCheck)])
        }
    }
}
