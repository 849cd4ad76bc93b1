import Foundation
import Logging
import NIOCore
import PostgresNIO
import StepSignCrypto
import StepSignStorage

// Sealed credential records (SPEC §5.4), the same rule as SQLite's: every read of a user
// checks the record against its seal and the log; every write that changes a sealed field
// locks the row, checks the record first (a broken one is not changed) and seals it again in
// the same transaction. A check that reads more than one statement runs in one snapshot
// (REPEATABLE READ, or under the row's lock), so a concurrent change never looks like
// tampering.
extension PostgresStore {
    /// The user row with everything its seal is checked against. `$latest`: the user's
    /// latest event's seq (an index lookup: `ledger_user_events`).
    static let sealedUserColumns = """
        \(userColumns), event_index, history_digest, device_keys_digest, seal, \
        (SELECT max(seq) FROM ledger WHERE auth_level < 0 AND user_name = users.name) AS latest_event
        """

    /// A row selected with ``sealedUserColumns``, decoded: the user and what its seal binds.
    struct StoredUser {
        var user: UserRecord
        var binding: SealBinding
        var seal: [UInt8]?
        var latestEventIndex: Int64
    }

    static func decodeStoredUser(_ row: PostgresRow) throws -> StoredUser {
        do {
            let (name, hash, changedAt, expired, mustChange, failed, blocked, blockedUntil, createdAt, token,
                 eventIndex, historyDigest, keysDigest, seal, latest) =
                try row.decode((String, String, Date, Bool, Bool, Int, Bool, Date?, Date, Data,
                                Int64, Data?, Data?, Data?, Int64?).self)
            let user = UserRecord(
                name: name, passwordHash: hash, passwordChangedAt: changedAt, passwordExpired: expired,
                mustChangePassword: mustChange, failedAttempts: failed, blocked: blocked,
                blockedUntil: blockedUntil, createdAt: createdAt, credentialToken: CredentialToken(bytes: token)
            )
            return StoredUser(
                user: user,
                binding: SealBinding(eventIndex: eventIndex, historyDigest: [UInt8](historyDigest ?? Data()),
                                     deviceKeysDigest: [UInt8](keysDigest ?? Data())),
                seal: seal.map { [UInt8]($0) },
                latestEventIndex: latest.map { $0 - 1 } ?? SealBinding.noEvent
            )
        } catch {
            throw malformed("users", error)
        }
    }

    /// `stored` with its ``UserRecord/sealFailure`` set: from the row alone, or with `parts`
    /// (the history's and device keys' digests as stored now) as well.
    static func checked(_ stored: StoredUser, seal: CredentialSeal,
                        parts: (history: [UInt8], deviceKeys: [UInt8])? = nil) -> UserRecord {
        var user = stored.user
        if let parts {
            user.sealFailure = seal.failure(of: user, binding: stored.binding, seal: stored.seal,
                                            latestEventIndex: stored.latestEventIndex,
                                            historyDigest: parts.history, deviceKeysDigest: parts.deviceKeys)
        } else {
            user.sealFailure = seal.failure(of: user, binding: stored.binding, seal: stored.seal,
                                            latestEventIndex: stored.latestEventIndex)
        }
        return user
    }

    /// The digests of `name`'s password history and device keys as stored now (one statement).
    static func partDigests(_ connection: AnsweredConnection, _ name: String,
                            logger: Logger) async throws -> (history: [UInt8], deviceKeys: [UInt8]) {
        let rows = try await connection.query("""
            SELECT 0 AS part, id, hash AS a, NULL::text AS b, NULL::text AS c, set_at AS t1, NULL::timestamptz AS t2
            FROM password_history WHERE user_name = \(name)
            UNION ALL
            SELECT 1, 0, kid, public_key_jwk, label, created_at, revoked_at FROM device_keys WHERE user_name = \(name)
            ORDER BY part, id
            """, logger: logger)
        var history: [(hash: String, setAt: Date)] = []
        var keys: [DeviceKeyRecord] = []
        for try await row in rows {
            do {
                let (part, _, a, b, c, t1, t2) = try row.decode((Int, Int64, String, String?, String?, Date, Date?).self)
                if part == 0 {
                    history.append((a, t1))
                } else {
                    keys.append(DeviceKeyRecord(kid: a, user: name, publicKeyJWK: b ?? "", label: c ?? "",
                                                createdAt: t1, revokedAt: t2))
                }
            } catch {
                throw malformed("password_history/device_keys", error)
            }
        }
        return (CredentialSeal.historyDigest(history), CredentialSeal.deviceKeysDigest(keys))
    }

    /// The digests of every user's password history and device keys as stored now, by user
    /// (two statements, whatever the number of users; users without either are absent).
    static func allPartDigests(_ connection: AnsweredConnection,
                               logger: Logger) async throws -> [String: (history: [UInt8], deviceKeys: [UInt8])] {
        var history: [String: [(hash: String, setAt: Date)]] = [:]
        for try await row in try await connection.query(
            "SELECT user_name, hash, set_at FROM password_history ORDER BY user_name, id", logger: logger) {
            do {
                let (user, hash, setAt) = try row.decode((String, String, Date).self)
                history[user, default: []].append((hash, setAt))
            } catch {
                throw malformed("password_history", error)
            }
        }
        var keys: [String: [DeviceKeyRecord]] = [:]
        for try await row in try await connection.query(
            "SELECT kid, user_name, public_key_jwk, label, created_at, revoked_at FROM device_keys", logger: logger) {
            let key = try decodeDeviceKey(row)
            keys[key.user, default: []].append(key)
        }
        var digests: [String: (history: [UInt8], deviceKeys: [UInt8])] = [:]
        for user in Set(history.keys).union(keys.keys) {
            digests[user] = (CredentialSeal.historyDigest(history[user] ?? []), CredentialSeal.deviceKeysDigest(keys[user] ?? []))
        }
        return digests
    }

    /// `name`'s record checked whole, or nil if there is no such user. `lock`: hold the row
    /// (`FOR UPDATE`) until the transaction ends, so that the check and the change that
    /// follows see the same record. `eventsBefore`: count only events below that seq (the
    /// ledger's own transaction, checking against the log as it was before its batch).
    static func checkedUser(_ connection: AnsweredConnection, _ name: String, seal: CredentialSeal, lock: Bool,
                            eventsBefore: Int64? = nil, logger: Logger) async throws -> UserRecord? {
        let rows = try await connection.query(lock ? """
            SELECT \(unescaped: sealedUserColumns) FROM users WHERE name = \(name) FOR UPDATE
            """ : """
            SELECT \(unescaped: sealedUserColumns) FROM users WHERE name = \(name)
            """, logger: logger)
        var found: StoredUser?
        for try await row in rows { found = try decodeStoredUser(row) }
        guard var stored = found else { return nil }
        if let eventsBefore {
            stored.latestEventIndex = try await latestEventIndex(connection, name, before: eventsBefore, logger: logger)
        } else if lock {
            // A row that a transaction committed while this one waited for its lock is read as
            // that transaction left it (READ COMMITTED re-reads a locked row), but the
            // statement's subquery saw the log as it was before: the event that transaction
            // appended, which the row is now sealed to, was not counted, and a record changed
            // rightly would look rolled back. Read the latest event again, in a statement that
            // starts after the lock is held (no event of this user can commit meanwhile: each
            // takes this row's lock).
            stored.latestEventIndex = try await latestEventIndex(connection, name, before: .max, logger: logger)
        }
        return checked(stored, seal: seal, parts: try await partDigests(connection, name, logger: logger))
    }

    /// The log index of `name`'s latest event with a seq below `before`, read in a statement of
    /// its own (``SealBinding/noEvent`` for none).
    static func latestEventIndex(_ connection: AnsweredConnection, _ name: String, before: Int64,
                                 logger: Logger) async throws -> Int64 {
        let latest = try await connection.query("""
            SELECT max(seq) FROM ledger WHERE auth_level < 0 AND user_name = \(name) AND seq < \(before)
            """, logger: logger).decode(Int64?.self).first { _ in true } ?? nil
        return latest.map { $0 - 1 } ?? SealBinding.noEvent
    }

    /// Seals `name`'s record as stored now, bound to the user's latest event and to the
    /// history and device keys stored now. Only for a record checked (and locked) in the same
    /// transaction, after changing it.
    static func reseal(_ connection: AnsweredConnection, _ name: String, seal: CredentialSeal, logger: Logger) async throws {
        let rows = try await connection.query(
            "SELECT \(unescaped: sealedUserColumns) FROM users WHERE name = \(name)", logger: logger
        )
        var found: StoredUser?
        for try await row in rows { found = try decodeStoredUser(row) }
        guard let stored = found else { return }
        let parts = try await partDigests(connection, name, logger: logger)
        let binding = SealBinding(eventIndex: stored.latestEventIndex, historyDigest: parts.history,
                                  deviceKeysDigest: parts.deviceKeys)
        let sealed = Data(seal.seal(stored.user, binding: binding))
        try await connection.query("""
            UPDATE users SET event_index = \(binding.eventIndex), history_digest = \(Data(parts.history)),
                device_keys_digest = \(Data(parts.deviceKeys)), seal = \(sealed)
            WHERE name = \(name)
            """, logger: logger)
    }

    /// The record of `name`, locked and checked: throws ``StorageError/recordSealBroken(user:_:)``
    /// if it fails; false if there is no such user.
    func lockSealed(_ connection: AnsweredConnection, _ name: String) async throws -> Bool {
        guard let user = try await Self.checkedUser(connection, name, seal: credentialSeal, lock: true, logger: logger) else {
            return false
        }
        if let failure = user.sealFailure { throw StorageError.recordSealBroken(user: name, failure) }
        return true
    }

    /// Runs `change` on `name`'s record in one transaction: locked and checked first (a record
    /// that fails is refused, ``StorageError/recordSealBroken(user:_:)``), sealed again after.
    /// False if there is no such user.
    func changeSealedRecord(_ name: String, _ change: (AnsweredConnection) async throws -> Void) async throws -> Bool {
        try await inTransaction { connection in
            guard try await lockSealed(connection, name) else { return false }
            try await change(connection)
            try await Self.reseal(connection, name, seal: credentialSeal, logger: logger)
            return true
        }
    }

    /// `body` in a read-only transaction with one snapshot for all its statements.
    func inSnapshot<T: Sendable>(_ body: (AnsweredConnection) async throws -> T) async throws -> T {
        try await withConnection { connection in
            try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            do {
                let value = try await body(connection)
                try await connection.query("COMMIT", logger: logger)
                return value
            } catch {
                if !connection.isClosed { _ = try? await connection.query("ROLLBACK", logger: logger) }
                throw error
            }
        }
    }

    /// A time as it reads back from a `timestamptz` column (whole microseconds): what a seal
    /// made before the write must be computed over.
    static func stored(_ date: Date) -> Date {
        var buffer = ByteBuffer()
        date.encode(into: &buffer, context: .default)
        return (try? Date(from: &buffer, type: .timestamptz, format: .binary, context: .default)) ?? date
    }

    // MARK: Opening

    /// The seal's first meeting with the database, in the migrator's transaction (under its
    /// lock): the key's check value is compared with the stored one, or stored, sealing every
    /// record that has none yet (the upgrade). Afterwards a record without a seal is never
    /// sealed. Storing the check value needs the owner's role (`docs/sql/roles.sql` gives the
    /// daemon's role only SELECT on `store_secrets`), as any migration does.
    static func prepareSeal(_ seal: CredentialSeal, on connection: AnsweredConnection, logger: Logger) async throws {
        let stored = try await connection.query(
            "SELECT value FROM store_secrets WHERE name = 'seal_check'", logger: logger
        ).decode(Data.self).first { _ in true }
        if let stored {
            guard ConstantTime.equals([UInt8](stored), seal.keyCheck) else { throw StorageError.sealKeyMismatch }
            return
        }
        var names: [String] = []
        for try await name in try await connection.query("SELECT name FROM users WHERE seal IS NULL", logger: logger)
            .decode(String.self) { names.append(name) }
        for name in names {
            try await reseal(connection, name, seal: seal, logger: logger)
        }
        for code in try await activationCodes(connection, unsealedOnly: true, user: nil, logger: logger) {
            try await connection.query("""
                UPDATE activation_codes SET seal = \(Data(seal.seal(code.record))) WHERE user_name = \(code.record.user)
                """, logger: logger)
        }
        do {
            try await connection.query(
                "INSERT INTO store_secrets (name, value) VALUES ('seal_check', \(Data(seal.keyCheck)))", logger: logger
            )
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == SQLState.insufficientPrivilege {
            throw PostgresStoreError.sealNotPermitted
        }
    }
}
