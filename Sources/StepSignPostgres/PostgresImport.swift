import Foundation
import Logging
import NIOCore
import PostgresNIO
import StepSignFormat
import StepSignStorage

/// Rows written as they are, inside the one transaction of ``PostgresStore/importing(_:)``:
/// the primitives of `stepsign admin migrate` (issue 14).
///
/// Nothing is computed but the log's Merkle tree, made in Swift as the log core makes it
/// (``insertLedgerEntries(_:)``): every column comes from the record given (sequence numbers,
/// hashes, tokens, times, flags). The database's own rules still apply: the ledger's chain trigger
/// checks each row against the one before it, so a source whose chain is broken is refused
/// and the transaction rolled back. Reads see the transaction's own rows, so the copy can be
/// compared with its source before anything is committed.
public struct PostgresImport: Sendable {
    let connection: AnsweredConnection
    let logger: Logger
    /// The target's seal: the records are sealed again under it (``sealRecords()``).
    let seal: CredentialSeal

    /// Rows per multi-row INSERT (at most 13 parameters each, under PostgreSQL's 65535).
    static let rowsPerStatement = 1000

    // MARK: Writing

    /// Users with their password hashes, password state, counters, blocks and credential tokens.
    public func insertUsers(_ users: [UserRecord]) async throws {
        try await insert(users, into: "users", columns: PostgresStore.userColumns, count: 10) { bindings, user in
            bindings.append(user.name)
            bindings.append(user.passwordHash)
            bindings.append(user.passwordChangedAt)
            bindings.append(user.passwordExpired)
            bindings.append(user.mustChangePassword)
            bindings.append(user.failedAttempts)
            bindings.append(user.blocked)
            bindings.append(user.blockedUntil)
            bindings.append(user.createdAt)
            try bindings.append(user.credentialToken.bytes)
        }
    }

    /// Seals every user record and activation code under the target's key (SPEC §5.4), bound
    /// to the users' latest events in the imported ledger: call it last, after the caller has
    /// checked every source record against the source's seal (a record that failed there must
    /// not be sealed here).
    public func sealRecords() async throws {
        var names: [String] = []
        for try await name in try await connection.query("SELECT name FROM users", logger: logger).decode(String.self) {
            names.append(name)
        }
        for name in names {
            try await PostgresStore.reseal(connection, name, seal: seal, logger: logger)
        }
        try await PostgresStore.fillNameKeys(connection, logger: logger)
        for code in try await PostgresStore.activationCodes(connection, unsealedOnly: false, user: nil, logger: logger) {
            var record = code.record
            record.expiresAt = PostgresStore.stored(record.expiresAt)
            try await connection.query("""
                UPDATE activation_codes SET seal = \(Data(seal.seal(record))) WHERE user_name = \(record.user)
                """, logger: logger)
        }
    }

    /// Earlier password hashes, in the order given (the order the reuse rule reads them in).
    public func insertPasswordHistory(_ entries: [PasswordHistoryEntry]) async throws {
        try await insert(entries, into: "password_history", columns: "user_name, hash, set_at", count: 3) { bindings, entry in
            bindings.append(entry.user)
            bindings.append(entry.hash)
            bindings.append(entry.setAt)
        }
    }

    /// Device keys, revoked ones included, in the order given.
    public func insertDeviceKeys(_ keys: [DeviceKeyRecord]) async throws {
        try await insert(keys, into: "device_keys", columns: "kid, user_name, public_key_jwk, label, created_at, revoked_at",
                         count: 6) { bindings, key in
            bindings.append(key.kid)
            bindings.append(key.user)
            bindings.append(key.publicKeyJWK)
            bindings.append(key.label)
            bindings.append(key.createdAt)
            bindings.append(key.revokedAt)
        }
    }

    /// Marks the device keys named in `credentials` as FIDO2 security keys, with their
    /// credential IDs and signature counters (SPEC §5.7). After ``insertDeviceKeys(_:)``.
    public func setFIDO2Credentials(_ credentials: [String: FIDO2Credential]) async throws {
        for (kid, credential) in credentials.sorted(by: { $0.key < $1.key }) {
            try await connection.query("""
                UPDATE device_keys SET fido2_credential_id = \(credential.credentialID),
                    fido2_sign_count = \(Int64(credential.signCount)) WHERE kid = \(kid)
                """, logger: logger)
        }
    }

    /// The FIDO2 credentials of the device keys that are security keys, by kid.
    public func fido2Credentials() async throws -> [String: FIDO2Credential] {
        var credentials: [String: FIDO2Credential] = [:]
        let rows = try await connection.query("""
            SELECT kid, fido2_credential_id, fido2_sign_count FROM device_keys WHERE fido2_credential_id IS NOT NULL
            """, logger: logger)
        for try await (kid, id, count) in rows.decode((String, String, Int64).self) {
            credentials[kid] = FIDO2Credential(credentialID: id, signCount: UInt32(clamping: count))
        }
        return credentials
    }

    /// Signing key records as they are (active flag, revocation, instance, public half,
    /// endorsement), in the
    /// order given. Insert them after the ledger and checkpoints: the database refuses rows
    /// signed with a key it already knows as revoked.
    public func insertSigningKeys(_ keys: [SigningKeyRecord]) async throws {
        try await insert(keys, into: "signing_keys",
                         columns: "kid, created_at, active, revoked_at, instance, public_key, endorsement, revoked_index",
                         count: 8) { bindings, key in
            bindings.append(key.kid)
            bindings.append(key.createdAt)
            bindings.append(key.active)
            bindings.append(key.revokedAt)
            bindings.append(key.instance)
            bindings.append(key.publicKeyPEM)
            bindings.append(key.endorsement)
            bindings.append(key.revokedIndex)
        }
    }

    /// Ledger rows exactly as given (seq, hashes, JWS, peer columns, times); each must follow
    /// the last row in the database, which the chain trigger checks, and hash to its entry hash,
    /// which is checked here (the database hashes nothing, schema v17 and v20):
    /// ``PostgresImportError/brokenChain(_:)`` otherwise. The log's Merkle tree (SPEC §5.5) is
    /// extended by them as the log core extends it for a batch (``MerkleFrontier``, whose
    /// right edge is read from the tree stored so far): their leaves and the subtrees they
    /// complete, inserted as rows of `ledger_tree` under their storage indexes, the leaves
    /// included, as the append stores them (``LedgerCommit/nodes``).
    public func insertLedgerEntries(_ entries: [LedgerEntry]) async throws {
        guard let first = entries.first else { return }
        for (entry, next) in zip(entries, entries.dropFirst()) where next.seq != entry.seq + 1 {
            throw PostgresImportError.brokenChain("ledger entry \(next.seq) does not follow an entry \(next.seq - 1)")
        }
        for entry in entries where entry.entryHash != LedgerChain.entryHash(previous: entry.prevHash, jws: entry.jws) {
            throw PostgresImportError.brokenChain("ledger entry \(entry.seq) has a wrong entry_hash")
        }
        try await insert(entries, into: "ledger", columns: PostgresStore.ledgerColumns, count: 13) { bindings, entry in
            bindings.append(entry.seq)
            bindings.append(entry.signatureID)
            bindings.append(entry.user)
            bindings.append(entry.iat)
            bindings.append(entry.kid)
            bindings.append(entry.jws)
            try bindings.append(Data(entry.prevHash))
            try bindings.append(Data(entry.entryHash))
            bindings.append(Int64(entry.peer.uid))
            bindings.append(entry.peer.pid)
            bindings.append(entry.peer.comm)
            bindings.append(entry.authLevel)
            bindings.append(entry.createdAt)
        }
        var tree = try await frontier(size: first.seq - 1)
        var ids: [Int64] = []
        var hashes: [ByteBuffer] = []
        ids.reserveCapacity(2 * entries.count)
        hashes.reserveCapacity(2 * entries.count)
        for entry in entries {
            for (node, hash) in tree.append(leafHash: MerkleHash.leaf(entry.jws.utf8)) {
                ids.append(node.storageIndex)
                hashes.append(ByteBuffer(bytes: hash))
            }
        }
        try await connection.query("""
            INSERT INTO ledger_tree (id, hash)
            SELECT n.id, n.hash FROM unnest(\(ids)::bigint[], \(hashes)::bytea[]) AS n(id, hash) ORDER BY n.id
            """, logger: logger)
    }

    /// The right edge of the tree of the first `size` entries, from the rows stored so far
    /// (in this transaction); ``StorageError/ledgerTreeBroken(_:)`` when one is missing.
    private func frontier(size: Int64) async throws -> MerkleFrontier {
        let nodes = MerkleTree.subtrees(of: 0..<size)
        let stored = try await PostgresStore.treeHashes(nodes, connection, logger: logger)
        do {
            return try MerkleFrontier(size: size, hashes: nodes.map { node in
                guard let hash = stored[node] else { throw MerkleTreeError.missingNode(node) }
                return hash
            })
        } catch let error as MerkleTreeError {
            throw StorageError.ledgerTreeBroken("the tree of the \(size) entries copied so far: \(error)")
        }
    }

    /// Stored checkpoints, in the order given.
    public func insertCheckpoints(_ checkpoints: [LedgerCheckpointRecord]) async throws {
        try await insert(checkpoints, into: "ledger_checkpoints", columns: "seq, entry_hash, kid, jws, created_at",
                         count: 5) { bindings, checkpoint in
            bindings.append(checkpoint.seq)
            try bindings.append(Data(checkpoint.entryHash))
            bindings.append(checkpoint.kid)
            bindings.append(checkpoint.jws)
            bindings.append(checkpoint.createdAt)
        }
    }

    /// The log's C2SP checkpoints and its origin (SPEC §5.5), as the source stored them.
    public func insertLogCheckpoints(_ checkpoints: [LogCheckpointRecord], origin: String?) async throws {
        if let origin {
            try await connection.query("INSERT INTO log_origin (id, origin) VALUES (1, \(origin))", logger: logger)
        }
        try await insert(checkpoints, into: "log_checkpoints", columns: "size, instance, note, created_at",
                         count: 4) { bindings, checkpoint in
            bindings.append(checkpoint.size)
            bindings.append(checkpoint.instance)
            bindings.append(checkpoint.note)
            bindings.append(checkpoint.createdAt)
        }
    }

    /// Witnesses' cosignatures of the log's checkpoints (SPEC §5.6), as the source stored them.
    public func insertLogCosignatures(_ cosignatures: [LogCosignatureRecord]) async throws {
        try await insert(cosignatures, into: "log_cosignatures", columns: "size, witness, line, created_at",
                         count: 4) { bindings, cosignature in
            bindings.append(cosignature.size)
            bindings.append(cosignature.witness)
            bindings.append(cosignature.line)
            bindings.append(cosignature.createdAt)
        }
    }

    /// The log's epochs (SPEC §5.5), as the source stored them.
    public func insertLogEpochs(_ epochs: [LogEpochRecord]) async throws {
        try await insert(epochs, into: "log_epochs", columns: "epoch, origin, first_index, created_at",
                         count: 4) { bindings, epoch in
            bindings.append(epoch.epoch)
            bindings.append(epoch.origin)
            bindings.append(epoch.firstIndex)
            bindings.append(epoch.createdAt)
        }
    }

    /// Every stored epoch, by number.
    public func logEpochs() async throws -> [LogEpochRecord] {
        var epochs: [LogEpochRecord] = []
        let rows = try await connection.query(
            "SELECT epoch, origin, first_index, created_at FROM log_epochs ORDER BY epoch", logger: logger)
        for try await row in rows { epochs.append(try PostgresStore.decodeLogEpoch(row)) }
        return epochs
    }

    /// Every stored cosignature, by size, witness and line (byte order, as SQLite sorts them).
    public func logCosignatures() async throws -> [LogCosignatureRecord] {
        var cosignatures: [LogCosignatureRecord] = []
        let rows = try await connection.query(
            "SELECT size, witness, line, created_at FROM log_cosignatures ORDER BY size, witness COLLATE \"C\", line COLLATE \"C\"",
            logger: logger)
        for try await row in rows { cosignatures.append(try PostgresStore.decodeLogCosignature(row)) }
        return cosignatures
    }

    /// The log's C2SP checkpoints, by size and instance, and its origin.
    public func logCheckpoints() async throws -> (checkpoints: [LogCheckpointRecord], origin: String?) {
        var checkpoints: [LogCheckpointRecord] = []
        let rows = try await connection.query(
            "SELECT size, instance, note, created_at FROM log_checkpoints ORDER BY size, instance", logger: logger)
        for try await row in rows { checkpoints.append(try PostgresStore.decodeLogCheckpoint(row)) }
        var origin: String?
        for try await row in try await connection.query("SELECT origin FROM log_origin WHERE id = 1", logger: logger) {
            origin = try row.decode(String.self)
        }
        return (checkpoints, origin)
    }

    func insert<Row>(_ rows: [Row], into table: String, columns: String, count: Int,
                             bind: (inout PostgresBindings, Row) throws -> Void) async throws {
        var start = 0
        while start < rows.count {
            let end = min(start + Self.rowsPerStatement, rows.count)
            var bindings = PostgresBindings(capacity: (end - start) * count)
            var values: [String] = []
            values.reserveCapacity(end - start)
            var parameter = 0
            for row in rows[start..<end] {
                let placeholders = (1...count).map { "$\(parameter + $0)" }
                parameter += count
                values.append("(" + placeholders.joined(separator: ", ") + ")")
                try bind(&bindings, row)
            }
            try await connection.query(
                PostgresQuery(unsafeSQL: "INSERT INTO \(table) (\(columns)) VALUES " + values.joined(separator: ", "),
                              binds: bindings),
                logger: logger
            )
            start = end
        }
    }

    // MARK: Reading back (the transaction's own rows)

    /// All users, in byte order of their names.
    public func users() async throws -> [UserRecord] {
        var users: [UserRecord] = []
        let rows = try await connection.query(
            "SELECT \(unescaped: PostgresStore.userColumns) FROM users ORDER BY name COLLATE \"C\"", logger: logger
        )
        for try await row in rows { users.append(try PostgresStore.decodeUser(row)) }
        return users
    }

    /// All earlier password hashes, in the order stored.
    public func passwordHistory() async throws -> [PasswordHistoryEntry] {
        var entries: [PasswordHistoryEntry] = []
        let rows = try await connection.query("SELECT user_name, hash, set_at FROM password_history ORDER BY id", logger: logger)
        for try await row in rows {
            do {
                let (user, hash, setAt) = try row.decode((String, String, Date).self)
                entries.append(PasswordHistoryEntry(user: user, hash: hash, setAt: setAt))
            } catch {
                throw PostgresStore.malformed("password_history", error)
            }
        }
        return entries
    }

    /// All device keys, in the order stored.
    public func deviceKeys() async throws -> [DeviceKeyRecord] {
        var keys: [DeviceKeyRecord] = []
        let rows = try await connection.query("""
            SELECT kid, user_name, public_key_jwk, label, created_at, revoked_at FROM device_keys ORDER BY created_at, id
            """, logger: logger)
        for try await row in rows { keys.append(try PostgresStore.decodeDeviceKey(row)) }
        return keys
    }

    /// All signing keys, oldest first.
    public func signingKeys() async throws -> [SigningKeyRecord] {
        try await PostgresStore.signingKeys(on: connection, logger: logger)
    }

    /// Up to `limit` ledger entries after `afterSeq`, in order.
    public func ledgerEntries(afterSeq: Int64, limit: Int) async throws -> [LedgerEntry] {
        var entries: [LedgerEntry] = []
        let rows = try await connection.query(
            "SELECT \(unescaped: PostgresStore.ledgerColumns) FROM ledger WHERE seq > \(afterSeq) ORDER BY seq LIMIT \(limit)",
            logger: logger
        )
        for try await row in rows { entries.append(try PostgresStore.decodeLedgerEntry(row)) }
        return entries
    }

    /// All checkpoints, by seq.
    public func checkpoints() async throws -> [LedgerCheckpointRecord] {
        var checkpoints: [LedgerCheckpointRecord] = []
        let rows = try await connection.query(
            "SELECT seq, entry_hash, kid, jws, created_at FROM ledger_checkpoints ORDER BY seq, id", logger: logger
        )
        for try await row in rows {
            do {
                let (seq, hash, kid, jws, createdAt) = try row.decode((Int64, Data, String, String, Date).self)
                checkpoints.append(LedgerCheckpointRecord(seq: seq, entryHash: [UInt8](hash), kid: kid, jws: jws, createdAt: createdAt))
            } catch {
                throw PostgresStore.malformed("ledger_checkpoints", error)
            }
        }
        return checkpoints
    }

    /// The last ledger entry's seq and hash, or (0, genesis).
    public func ledgerHead() async throws -> LedgerHead {
        let (seq, hash) = try await PostgresStore.readTail(connection, logger: logger)
        return LedgerHead(seq: seq, entryHash: hash)
    }
}
