import Foundation
import NIOCore
import PostgresNIO
import StepSignFormat
import StepSignStorage

// The signature ledger, one chain for every daemon on the database (SPEC §5, §5.2).
extension PostgresStore {
    static let ledgerColumns = """
        seq, signature_id, user_name, iat, kid, jws, prev_hash, entry_hash, \
        peer_uid, peer_pid, peer_comm, auth_level, created_at
        """

    static func decodeLedgerEntry(_ row: PostgresRow) throws -> LedgerEntry {
        do {
            let (seq, signatureID, user, iat, kid, jws, prevHash, entryHash, uid, pid, comm, level, createdAt) =
                try row.decode((Int64, String, String, Int64, String, String, Data, Data, Int64, Int32, String, Int, Date).self)
            guard let uid = UInt32(exactly: uid) else { throw StorageError.malformedRow(table: "ledger", detail: "peer_uid \(uid)") }
            return LedgerEntry(
                seq: seq, signatureID: signatureID, user: user, iat: iat, kid: kid, jws: jws,
                peer: LedgerPeer(uid: uid, pid: pid, comm: comm), authLevel: level,
                prevHash: [UInt8](prevHash), entryHash: [UInt8](entryHash), createdAt: createdAt
            )
        } catch let error as StorageError {
            throw error
        } catch {
            throw malformed("ledger", error)
        }
    }

    /// The log core's batch (SPEC §5.2, §5.5), one database-side lock, one statement: `CALL
    /// stepsign_ledger_commit` (schema v17) takes the cluster-wide ledger lock, compares the
    /// log's tail with the one the batch was computed on, inserts its rows, tree nodes and
    /// checkpoints as given and COMMITs inside the call (or rolls back and answers the tail it
    /// found). The lock is held only while the server works — no round trip to a daemon under
    /// it — and the call answers after the commit is durable. A batch whose events bind records
    /// (SPEC §5.4) is committed instead in a transaction of its own (`BEGIN`,
    /// `stepsign_ledger_insert`, the records sealed again, `COMMIT`). A daemon that dies
    /// mid-batch holds no lock.
    ///
    /// A commit that claims the log's turn (``LedgerCommit/claimTurn``, schema v18) runs on
    /// the connection that holds it (``PostgresLedgerTurns``), kept for the batch's next
    /// commit when the tail moved, else given back. An empty commit with a claim takes the
    /// turn and keeps it for the batch's next commit (``LedgerCommit/takingTurn(_:)``: the batch
    /// then reads the entries that came first under it), or gives back the turn kept for it.
    /// A store with a pool of one connection claims no turn (the batch could not read the other
    /// daemons' entries while its turn keeps the connection).
    ///
    /// A call or `COMMIT` whose answer is lost with the connection (the server stopped, the
    /// backend terminated) leaves the batch committed or not:
    /// ``resolveInterruptedCommit(_:cause:)`` finds out which.
    public func ledgerTime(_ date: Date) -> Date { date.postgresRounded }

    public func commitLedger(_ commit: LedgerCommit) async throws -> LedgerCommitOutcome {
        guard !commit.entries.isEmpty else {
            if let claim = commit.claimTurn {
                if commit.takesTurn, claimsTurns {
                    if let kept = ledgerTurns.take(claim) {
                        ledgerTurns.keep(kept, for: claim, logger: logger)
                    } else {
                        ledgerTurns.keep(try await PostgresLedgerTurns.claim(on: self, logger: logger), for: claim, logger: logger)
                    }
                } else {
                    ledgerTurns.release(claim)
                }
            }
            return .committed([])
        }
        // Returned entries carry the time as it will read back from the row.
        let createdAt = commit.createdAt.postgresRounded
        var turn: PostgresLedgerTurns.Held?
        var keepTurn = false
        defer {
            if let turn, let claim = commit.claimTurn {
                if keepTurn { ledgerTurns.keep(turn, for: claim, logger: logger) } else { turn.release() }
            }
        }
        do {
            if let claim = commit.claimTurn, claimsTurns {
                if let kept = ledgerTurns.take(claim) {
                    turn = kept
                } else {
                    turn = try await PostgresLedgerTurns.claim(on: self, logger: logger)
                }
            }
            let held = turn?.connection
            let moved: LedgerCommitOutcome?
            if LedgerAppend.usersNamedByEvents(commit.items).isEmpty, LedgerAppend.approvalsNamedByEvents(commit.items).isEmpty {
                moved = try await retryingAbortedByServer {
                    try await onConnection(held) { connection in
                        try await Self.committing(connection) {
                            try await Self.insert(commit, createdAt: createdAt, procedure: true, connection, logger: logger)
                        }
                    }
                }
            } else {
                moved = try await transaction(on: held) { connection in
                    if let moved = try await Self.insert(commit, createdAt: createdAt, procedure: false, connection, logger: logger) {
                        return moved
                    }
                    try await bindRecords(of: commit.items, firstSeq: commit.expected.seq + 1, connection)
                    try await bindApprovals(of: commit.items, firstSeq: commit.expected.seq + 1, connection)
                    return nil
                }
            }
            keepTurn = moved != nil
            return moved ?? .committed(commit.entries(createdAt: createdAt))
        } catch let interrupted as CommitInterrupted {
            return .committed(try await resolveInterruptedCommit(commit.items, cause: interrupted.error))
        } catch let PostgresStoreError.server(sqlState, message) where sqlState == SQLState.uniqueViolation && message.contains("signature_id") {
            throw StorageError.duplicateSignatureID(try await duplicateID(in: commit.items) ?? "")
        } catch let PostgresStoreError.server(sqlState, message) where sqlState == SQLState.uniqueViolation && message.contains("ledger_tree") {
            throw StorageError.ledgerTreeBroken("the tree has leaves past the ledger's last entry \(commit.expected.seq): entries were removed (\(message))")
        } catch let PostgresStoreError.server(sqlState, message) where sqlState == SQLState.dataCorrupted {
            throw StorageError.ledgerTreeBroken(message)
        }
    }

    /// `CALL stepsign_ledger_commit` (`procedure`: committed or rolled back by the call) or
    /// `SELECT … FROM stepsign_ledger_insert` (in the caller's transaction): nil when the batch
    /// was inserted, else the tail found.
    private static func insert(_ commit: LedgerCommit, createdAt: Date, procedure: Bool,
                               _ connection: AnsweredConnection, logger: Logger) async throws -> LedgerCommitOutcome? {
        let entries = commit.entries
        let expectedEpochs = commit.expectedEpochs.map { Int32($0) }
        let bytes = { (hashes: [[UInt8]]) in hashes.map { ByteBuffer(bytes: $0) } }
        let arguments: PostgresQuery = """
            \(commit.expected.seq), \(ByteBuffer(bytes: commit.expected.entryHash)), \(expectedEpochs)::integer,
            \(entries.map(\.seq))::bigint[], \(entries.map(\.signatureID))::text[], \(entries.map(\.user))::text[],
            \(entries.map(\.iat))::bigint[], \(entries.map(\.kid))::text[], \(entries.map(\.jws))::text[],
            \(bytes(entries.map(\.prevHash)))::bytea[], \(bytes(entries.map(\.entryHash)))::bytea[],
            \(entries.map { Int64($0.peer.uid) })::bigint[], \(entries.map(\.peer.pid))::integer[],
            \(entries.map(\.peer.comm))::text[], \(entries.map { Int64($0.authLevel) })::integer[], \(createdAt),
            \(commit.nodes.map(\.node.storageIndex))::bigint[], \(bytes(commit.nodes.map(\.hash)))::bytea[],
            \(commit.checkpoints.map(\.size))::bigint[], \(commit.checkpoints.map(\.instance))::text[],
            \(commit.checkpoints.map(\.note))::text[]
            """
        let query = PostgresQuery(unsafeSQL: procedure
            ? "CALL stepsign_ledger_commit(" + arguments.sql + ", NULL::bigint, NULL::bytea, NULL::integer, NULL::boolean)"
            : "SELECT tail_seq, tail_hash, epoch_count, moved FROM stepsign_ledger_insert(" + arguments.sql + ")",
            binds: arguments.binds)
        let rows = try await connection.query(query, logger: logger)
        var answer: (Int64, Data, Int32?, Bool)?
        for try await row in rows {
            do { answer = try row.decode((Int64, Data, Int32?, Bool).self) } catch { throw malformed("ledger", error) }
        }
        guard let (tailSeq, tailHash, epochs, moved) = answer else {
            throw StorageError.malformedRow(table: "ledger", detail: "stepsign_ledger_commit returned no row")
        }
        guard moved else { return nil }
        return .tailMoved(LedgerHead(seq: tailSeq, entryHash: [UInt8](tailHash)), epochs: Int(epochs ?? 0))
    }

    /// Seals again, bound to their new latest event (SPEC §5.4), the records of the users
    /// `batch`'s events name that passed their check against the log as it was before the
    /// batch (entries from `firstSeq` on). A record that fails stays as it is. Under the
    /// ledger lock, then each user's row lock: no other transaction takes them the other way.
    private func bindRecords(of batch: [LedgerAppend], firstSeq: Int64, _ connection: AnsweredConnection) async throws {
        for name in LedgerAppend.usersNamedByEvents(batch) {
            guard let user = try await Self.checkedUser(connection, name, seal: credentialSeal, lock: true,
                                                        eventsBefore: firstSeq, logger: logger),
                  user.sealFailure == nil else { continue }
            try await Self.reseal(connection, name, seal: credentialSeal, logger: logger)
        }
    }

    /// Finds out whether a batch whose commit lost its answer was committed: on a new
    /// connection, takes the ledger lock (which the batch's transaction held until it ended,
    /// whichever way) and reads the batch's rows. Committed (one transaction: all of them, in
    /// the batch's order): the entries as stored are returned, as if the answer had come. Not
    /// committed: ``PostgresStoreError/unavailable(_:)`` (nothing was recorded). The lookup is
    /// retried until `commitResolutionTimeout`; after that,
    /// ``StorageError/ledgerCommitOutcomeUnknown(signatureIDs:)``.
    func resolveInterruptedCommit(_ batch: [LedgerAppend], cause: any Error) async throws -> [LedgerEntry] {
        let ids = batch.map(\.signatureID)
        guard !ids.isEmpty else { throw cause }
        logger.warning("ledger commit interrupted; looking up its outcome",
                       metadata: ["entries": "\(ids.count)", "firstSignatureID": "\(ids[0])", "error": "\(cause)"])
        let deadline = ContinuousClock.now + commitResolutionTimeout
        var lastError = cause
        while ContinuousClock.now < deadline {
            let found: [LedgerEntry]
            do {
                found = try await inTransaction { connection in
                    // Bounded: a backend that still holds the lock must not hold us longer.
                    try await connection.query("SET LOCAL lock_timeout = '5s'", logger: logger)
                    try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.ledgerLockKey))", logger: logger)
                    let rows = try await connection.query(
                        "SELECT \(unescaped: Self.ledgerColumns) FROM ledger WHERE signature_id = ANY(\(ids)) ORDER BY seq",
                        logger: logger
                    )
                    var entries: [LedgerEntry] = []
                    for try await row in rows { entries.append(try Self.decodeLedgerEntry(row)) }
                    return entries
                }
            } catch let error as PostgresStoreError {
                // Unreachable still, or the lock not had in time: ask again.
                let retry = switch error {
                case .unavailable: true
                case let .server(sqlState, _): sqlState == SQLState.lockNotAvailable
                default: false
                }
                guard retry else { throw error }
                lastError = error
                try await Task.sleep(for: .milliseconds(250))
                continue
            }
            guard !found.isEmpty else {
                logger.warning("ledger commit interrupted: not committed", metadata: ["firstSignatureID": "\(ids[0])"])
                throw PostgresStoreError.unavailable("the ledger commit was interrupted and did not take place (\(cause))")
            }
            guard found.map(\.signatureID) == ids, zip(found, found.dropFirst()).allSatisfy({ $0.seq + 1 == $1.seq }) else {
                throw StorageError.malformedRow(table: "ledger", detail: "the interrupted batch of \(ids[0]) is not stored whole and in order")
            }
            logger.warning("ledger commit interrupted: committed", metadata: ["firstSeq": "\(found[0].seq)", "entries": "\(found.count)"])
            return found
        }
        logger.error("ledger commit outcome unknown", metadata: [
            "signatureIDs": "\(ids.joined(separator: ","))", "error": "\(lastError)",
        ])
        throw StorageError.ledgerCommitOutcomeUnknown(signatureIDs: ids)
    }

    /// The batch's first signature ID that is in the ledger already or repeats within it.
    private func duplicateID(in batch: [LedgerAppend]) async throws -> String? {
        let ids = batch.map(\.signatureID)
        let stored = try await withConnection { connection in
            var found = Set<String>()
            let rows = try await connection.query(
                "SELECT signature_id FROM ledger WHERE signature_id = ANY(\(ids))", logger: logger
            )
            for try await id in rows.decode(String.self) { found.insert(id) }
            return found
        }
        var seen = Set<String>()
        for id in ids {
            if stored.contains(id) || !seen.insert(id).inserted { return id }
        }
        return nil
    }

    /// The last entry's seq and hash, or (0, genesis); a primary-key index lookup.
    static func readTail(_ connection: AnsweredConnection, logger: Logger) async throws -> (Int64, [UInt8]) {
        let rows = try await connection.query("SELECT seq, entry_hash FROM ledger ORDER BY seq DESC LIMIT 1", logger: logger)
        for try await row in rows {
            do {
                let (seq, hash) = try row.decode((Int64, Data).self)
                return (seq, [UInt8](hash))
            } catch {
                throw malformed("ledger", error)
            }
        }
        return (0, LedgerChain.genesisHash)
    }

    public func appendCheckpoint(_ checkpoint: LedgerCheckpointRecord) async throws {
        try await withConnection { connection in
            try await Self.insertCheckpoint(checkpoint, connection, logger: logger)
        }
    }

    static func insertCheckpoint(_ checkpoint: LedgerCheckpointRecord, _ connection: AnsweredConnection, logger: Logger) async throws {
        try await connection.query("""
            INSERT INTO ledger_checkpoints (seq, entry_hash, kid, jws, created_at)
            VALUES (\(checkpoint.seq), \(Data(checkpoint.entryHash)), \(checkpoint.kid), \(checkpoint.jws), \(checkpoint.createdAt))
            """, logger: logger)
    }

    public func ledgerTreeHashes(_ nodes: [MerkleNode]) async throws -> [MerkleNode: [UInt8]] {
        guard !nodes.isEmpty else { return [:] }
        return try await withConnection { connection in
            try await Self.treeHashes(nodes, connection, logger: logger)
        }
    }

    static func treeHashes(_ nodes: [MerkleNode], _ connection: AnsweredConnection, logger: Logger) async throws
        -> [MerkleNode: [UInt8]] {
        guard !nodes.isEmpty else { return [:] }
        let byIndex = Dictionary(nodes.map { ($0.storageIndex, $0) }, uniquingKeysWith: { first, _ in first })
        let rows = try await connection.query(
            "SELECT id, hash FROM ledger_tree WHERE id = ANY(\(Array(byIndex.keys))::bigint[])", logger: logger
        )
        var hashes: [MerkleNode: [UInt8]] = [:]
        for try await row in rows {
            do {
                let (id, hash) = try row.decode((Int64, Data).self)
                if let node = byIndex[id] { hashes[node] = [UInt8](hash) }
            } catch {
                throw Self.malformed("ledger_tree", error)
            }
        }
        return hashes
    }

    public func appendLogCheckpoint(_ checkpoint: LogCheckpointRecord) async throws {
        try await withConnection { connection in
            try await Self.insertLogCheckpoint(checkpoint, connection, logger: logger)
        }
    }

    static func insertLogCheckpoint(_ checkpoint: LogCheckpointRecord, _ connection: AnsweredConnection, logger: Logger) async throws {
        try await connection.query("""
            INSERT INTO log_checkpoints (size, instance, note, created_at)
            VALUES (\(checkpoint.size), \(checkpoint.instance), \(checkpoint.note), \(checkpoint.createdAt))
            ON CONFLICT (size, instance) DO NOTHING
            """, logger: logger)
    }

    public func logCheckpoints(afterSize: Int64, throughSize: Int64?) async throws -> [LogCheckpointRecord] {
        let through = throughSize ?? .max
        return try await withConnection { connection in
            let rows = try await connection.query("""
                SELECT size, instance, note, created_at FROM log_checkpoints
                WHERE size > \(afterSize) AND size <= \(through) ORDER BY size, instance
                """, logger: logger)
            var checkpoints: [LogCheckpointRecord] = []
            for try await row in rows { checkpoints.append(try Self.decodeLogCheckpoint(row)) }
            return checkpoints
        }
    }

    /// A row of `SELECT size, instance, note, created_at FROM log_checkpoints`.
    static func decodeLogCheckpoint(_ row: PostgresRow) throws -> LogCheckpointRecord {
        do {
            let (size, instance, note, createdAt) = try row.decode((Int64, String, String, Date).self)
            return LogCheckpointRecord(size: size, instance: instance, note: note, createdAt: createdAt)
        } catch {
            throw malformed("log_checkpoints", error)
        }
    }

    /// A row of `SELECT size, witness, line, created_at FROM log_cosignatures`.
    static func decodeLogCosignature(_ row: PostgresRow) throws -> LogCosignatureRecord {
        do {
            let (size, witness, line, createdAt) = try row.decode((Int64, String, String, Date).self)
            return LogCosignatureRecord(size: size, witness: witness, line: line, createdAt: createdAt)
        } catch {
            throw malformed("log_cosignatures", error)
        }
    }

    public func claimLogOrigin(_ origin: String) async throws -> String {
        try await withConnection { connection in
            // The insert or the row a daemon stored before. A row committed by a daemon that
            // raced this one is not in this statement's snapshot (the insert did nothing): the
            // next statement, with a new snapshot, reads it.
            for try await row in try await connection.query("""
                INSERT INTO log_origin (id, origin) VALUES (1, \(origin)) ON CONFLICT (id) DO NOTHING RETURNING origin
                """, logger: logger) {
                return try row.decode(String.self)
            }
            for try await row in try await connection.query("SELECT origin FROM log_origin WHERE id = 1", logger: logger) {
                return try row.decode(String.self)
            }
            throw StorageError.malformedRow(table: "log_origin", detail: "no origin after an insert that conflicted")
        }
    }

    public func addLogCosignatures(_ cosignatures: [LogCosignatureRecord]) async throws {
        try await withConnection { connection in
            for cosignature in cosignatures {
                try await connection.query("""
                    INSERT INTO log_cosignatures (size, witness, line, created_at)
                    VALUES (\(cosignature.size), \(cosignature.witness), \(cosignature.line), \(cosignature.createdAt))
                    ON CONFLICT (size, witness, line) DO NOTHING
                    """, logger: logger)
            }
        }
    }

    public func logCosignatures(size: Int64) async throws -> [LogCosignatureRecord] {
        try await withConnection { connection in
            try await Self.cosignatures(size: size, connection, logger: logger)
        }
    }

    static func cosignatures(size: Int64, _ connection: AnsweredConnection, logger: Logger) async throws -> [LogCosignatureRecord] {
        let rows = try await connection.query("""
            SELECT size, witness, line, created_at FROM log_cosignatures WHERE size = \(size)
             ORDER BY witness COLLATE "C", line COLLATE "C"
            """, logger: logger)
        var cosignatures: [LogCosignatureRecord] = []
        for try await row in rows { cosignatures.append(try decodeLogCosignature(row)) }
        return cosignatures
    }

    public func logOrigin() async throws -> String? {
        try await withConnection { connection in
            let rows = try await connection.query("SELECT origin FROM log_origin WHERE id = 1", logger: logger)
            for try await row in rows { return try row.decode(String.self) }
            return nil
        }
    }

    public func logEpochs() async throws -> [LogEpochRecord] {
        try await withConnection { connection in
            let rows = try await connection.query(
                "SELECT epoch, origin, first_index, created_at FROM log_epochs ORDER BY epoch", logger: logger)
            var epochs: [LogEpochRecord] = []
            for try await row in rows { epochs.append(try Self.decodeLogEpoch(row)) }
            return epochs
        }
    }

    public func addLogEpoch(_ epoch: LogEpochRecord) async throws {
        do {
            _ = try await withConnection { connection in
                try await connection.query("""
                    INSERT INTO log_epochs (epoch, origin, first_index, created_at)
                    VALUES (\(epoch.epoch), \(epoch.origin), \(epoch.firstIndex), \(epoch.createdAt))
                    """, logger: logger)
            }
        } catch let PostgresStoreError.server(sqlState, _) where sqlState == SQLState.uniqueViolation {
            throw StorageError.logEpochExists(epoch.epoch)
        }
    }

    static func decodeLogEpoch(_ row: PostgresRow) throws -> LogEpochRecord {
        do {
            let (epoch, origin, firstIndex, createdAt) = try row.decode((Int64, String, Int64, Date).self)
            return LogEpochRecord(epoch: epoch, origin: origin, firstIndex: firstIndex, createdAt: createdAt)
        } catch {
            throw malformed("log_epochs", error)
        }
    }

    public func ledgerCheckpoints(afterSeq: Int64, throughSeq: Int64?) async throws -> [LedgerCheckpointRecord] {
        let through = throughSeq ?? .max
        return try await withConnection { connection in
            let rows = try await connection.query("""
                SELECT seq, entry_hash, kid, jws, created_at FROM ledger_checkpoints
                WHERE seq > \(afterSeq) AND seq <= \(through) ORDER BY seq, id
                """, logger: logger)
            var checkpoints: [LedgerCheckpointRecord] = []
            for try await row in rows {
                do {
                    let (seq, hash, kid, jws, createdAt) = try row.decode((Int64, Data, String, String, Date).self)
                    checkpoints.append(LedgerCheckpointRecord(seq: seq, entryHash: [UInt8](hash), kid: kid, jws: jws, createdAt: createdAt))
                } catch {
                    throw Self.malformed("ledger_checkpoints", error)
                }
            }
            return checkpoints
        }
    }

    public func ledgerHead() async throws -> LedgerHead {
        try await withConnection { connection in
            let (seq, hash) = try await Self.readTail(connection, logger: logger)
            return LedgerHead(seq: seq, entryHash: hash)
        }
    }

    public func ledgerEntry(signatureID: String) async throws -> LedgerEntry? {
        try await withConnection { connection in
            try await Self.entry(signatureID: signatureID, connection, logger: logger)
        }
    }

    static func entry(signatureID: String, _ connection: AnsweredConnection, logger: Logger) async throws -> LedgerEntry? {
        let rows = try await connection.query(
            "SELECT \(unescaped: ledgerColumns) FROM ledger WHERE signature_id = \(signatureID)", logger: logger
        )
        for try await row in rows { return try decodeLedgerEntry(row) }
        return nil
    }

    public func ledgerCount() async throws -> Int64 {
        try await withConnection { connection in
            try await Self.readTail(connection, logger: logger).0
        }
    }

    public func ledgerSignatureCount() async throws -> Int64 {
        try await withConnection { connection in
            // One statement: one snapshot.
            let rows = try await connection.query("""
                SELECT coalesce((SELECT max(seq) FROM ledger), 0) - (SELECT count(*) FROM ledger WHERE auth_level < 0)
                """, logger: logger)
            for try await count in rows.decode(Int64.self) { return count }
            return 0
        }
    }

    public func ledgerEntries(afterSeq: Int64, limit: Int) async throws -> [LedgerEntry] {
        guard limit > 0 else { return [] }
        return try await withConnection { connection in
            let rows = try await connection.query(
                "SELECT \(unescaped: Self.ledgerColumns) FROM ledger WHERE seq > \(afterSeq) ORDER BY seq LIMIT \(limit)",
                logger: logger
            )
            var entries: [LedgerEntry] = []
            for try await row in rows { entries.append(try Self.decodeLedgerEntry(row)) }
            return entries
        }
    }

    public func ledgerEvents(user: String, afterSeq: Int64, limit: Int) async throws -> [LedgerEntry] {
        guard limit > 0 else { return [] }
        return try await withConnection { connection in
            let rows = try await connection.query("""
                SELECT \(unescaped: Self.ledgerColumns) FROM ledger
                WHERE auth_level < 0 AND user_name = \(user) AND seq > \(afterSeq) ORDER BY seq LIMIT \(limit)
                """, logger: logger)
            var entries: [LedgerEntry] = []
            for try await row in rows { entries.append(try Self.decodeLedgerEntry(row)) }
            return entries
        }
    }

    /// Streams the checkpoints and then the ledger from one snapshot (a `REPEATABLE READ`
    /// transaction), 1024 rows at a time, through ``LedgerVerifier``. A row whose columns
    /// cannot be read counts as a broken entry.
    public func auditLedger(options: LedgerVerifier.Options) async throws -> LedgerAudit {
        try await withConnection { connection in
            try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            do {
                var verifier = LedgerVerifier(options: options)
                let checkpoints = try await connection.query("SELECT jws FROM ledger_checkpoints ORDER BY seq, id", logger: logger)
                for try await row in checkpoints {
                    verifier.addCheckpoint((try? row.decode(String.self)) ?? "")
                }
                let notes = try await connection.query("SELECT note FROM log_checkpoints ORDER BY size, instance", logger: logger)
                for try await row in notes {
                    verifier.addLogCheckpoint((try? row.decode(String.self)) ?? "")
                }
                let rows = try await connection.query("""
                    SELECT seq, signature_id, jws, prev_hash, entry_hash, user_name, kid, iat, peer_uid, peer_pid, peer_comm
                    FROM ledger ORDER BY seq
                    """, logger: logger)
                var batch: [LedgerLink] = []
                batch.reserveCapacity(1024)
                var stopped = false
                for try await row in rows where !stopped {
                    let columns = row.makeRandomAccess()
                    let peer: SignaturePeer? = if let uid = try? columns[8].decode(Int64.self), let uid = UInt32(exactly: uid),
                                                  let pid = try? columns[9].decode(Int32.self),
                                                  let comm = try? columns[10].decode(String.self) {
                        SignaturePeer(uid: uid, pid: pid, comm: comm)
                    } else { nil }
                    batch.append(LedgerLink(
                        seq: (try? columns[0].decode(Int64.self)) ?? 0,
                        signatureID: (try? columns[1].decode(String.self)) ?? "",
                        payloadSignature: (try? columns[2].decode(String.self)) ?? "",
                        prevHash: (try? columns[3].decode(Data.self)).map { [UInt8]($0) } ?? [],
                        entryHash: (try? columns[4].decode(Data.self)).map { [UInt8]($0) } ?? [],
                        user: (try? columns[5].decode(String.self)) ?? "",
                        kid: (try? columns[6].decode(String.self)) ?? "",
                        iat: (try? columns[7].decode(Int64.self)) ?? -1,
                        peer: peer ?? SignaturePeer(uid: .max, pid: -1, comm: "")
                    ))
                    if batch.count == 1024 {
                        if !verifier.add(contentsOf: batch) { stopped = true }
                        batch.removeAll(keepingCapacity: true)
                    }
                }
                if !stopped { verifier.add(contentsOf: batch) }
                try await connection.query("COMMIT", logger: logger)
                return verifier.finish()
            } catch {
                if !connection.isClosed { _ = try? await connection.query("ROLLBACK", logger: logger) }
                throw error
            }
        }
    }
}
