import Foundation
import GRDB
import StepSignFormat

// The signature ledger (SPEC §5).
extension SQLiteStore {
    static let ledgerColumns = """
        seq, signature_id, user_name, iat, kid, jws, prev_hash, entry_hash, \
        peer_uid, peer_pid, peer_comm, auth_level, created_at
        """

    static func decodeLedgerEntry(_ row: Row) throws -> LedgerEntry {
        do {
            return LedgerEntry(
                seq: try row.decode(atIndex: 0),
                signatureID: try row.decode(atIndex: 1),
                user: try row.decode(atIndex: 2),
                iat: try row.decode(atIndex: 3),
                kid: try row.decode(atIndex: 4),
                jws: try row.decode(atIndex: 5),
                peer: LedgerPeer(
                    uid: try row.decode(atIndex: 8),
                    pid: try row.decode(atIndex: 9),
                    comm: try row.decode(atIndex: 10)
                ),
                authLevel: try row.decode(atIndex: 11),
                prevHash: [UInt8](try row.decode(Data.self, atIndex: 6)),
                entryHash: [UInt8](try row.decode(Data.self, atIndex: 7)),
                createdAt: Date(storageSeconds: try row.decode(atIndex: 12))
            )
        } catch {
            throw StorageError.malformedRow(table: "ledger", detail: "\(error)")
        }
    }

    /// Commits on the store's ledger thread (``ledgerExecutor``): GRDB's writer access blocks
    /// there until the commit is durable, and a caller already on that thread (the engine's
    /// ledger writer prefers it) pays no hop.
    public func commitLedger(_ commit: LedgerCommit) async throws -> LedgerCommitOutcome {
        guard !commit.entries.isEmpty else { return .committed([]) }
        return try await withTaskExecutorPreference(ledgerThread) {
            try commitBlocking(commit)
        }
    }

    public var ledgerExecutor: (any TaskExecutor)? { ledgerThread }

    public func ledgerTime(_ date: Date) -> Date { Date(storageSeconds: date.storageSeconds) }

    /// The log core's batch (SPEC §5.5), in one immediate transaction: the tail compared with
    /// the one it expects (an index lookup), then plain inserts: rows, tree nodes, checkpoints,
    /// and the records its events bind sealed again.
    private func commitBlocking(_ commit: LedgerCommit) throws -> LedgerCommitOutcome {
        // Returned entries carry the time as it will read back from the row.
        let createdSeconds = commit.createdAt.storageSeconds
        var outcome: LedgerCommitOutcome?
        try pool.writeWithoutTransaction { db in
            try db.inImmediateTransaction {
                let (seq, hash) = try Self.readLedgerTail(db)
                var epochs: Int?
                if commit.expectedEpochs != nil || seq != commit.expected.seq || hash != commit.expected.entryHash {
                    epochs = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM log_epochs")) ?? 0
                }
                guard seq == commit.expected.seq, hash == commit.expected.entryHash,
                      commit.expectedEpochs == nil || commit.expectedEpochs == epochs else {
                    outcome = .tailMoved(LedgerHead(seq: seq, entryHash: hash), epochs: epochs ?? 0)
                    return .rollback
                }
                // A tree with nodes of leaves past the last entry: entries were removed behind
                // the daemon's back. Nodes are stored in append order, so the first `seq`
                // leaves' nodes end with the highest subtree leaf `seq - 1` completes.
                let highest = try db.cachedStatement(sql: "SELECT max(id) FROM ledger_tree").firstRow { row in
                    try SQLiteColumn.int64(row, 0, table: "ledger_tree")
                } ?? nil
                if let highest, highest > Self.lastTreeIndex(size: seq) {
                    throw StorageError.ledgerTreeBroken(Self.nodesPastTheEnd(seq))
                }
                // No row signed with a revoked key (SPEC §5.4): each kid of the batch once.
                try Self.refuseRevokedKeys(commit.entries, db)
                // The users this batch's events name, whose records are bound to their
                // latest event (SPEC §5.4): checked before, sealed again after.
                let named = try self.usersToBind(db, commit.items)
                let requests = try self.approvalsToBind(db, commit.items)
                var requestEvents: [(seq: Int64, approvalID: String)] = []
                // One buffer for every row's text and blobs (``SQLiteParameters``).
                var bytes = SQLiteParameters.Bytes()
                let insert = try db.cachedStatement(sql: """
                    INSERT INTO ledger (\(Self.ledgerColumns))
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                // One statement per entry: several rows a statement, as the tree nodes below go
                // in, measured no faster for entries (docs/performance.md).
                for (item, entry) in zip(commit.items, commit.entries) {
                    do {
                        // Bound straight to SQLite: no arguments array per row (issue 43).
                        try SQLiteParameters.execute(insert, bytes: &bytes) { row in
                            row.add(entry.seq); row.add(entry.signatureID); row.add(entry.user); row.add(entry.iat)
                            row.add(entry.kid); row.add(entry.jws); row.add(blob: entry.prevHash); row.add(blob: entry.entryHash)
                            row.add(entry.peer.uid); row.add(entry.peer.pid); row.add(entry.peer.comm)
                            row.add(entry.authLevel); row.add(createdSeconds)
                        }
                    } catch let error as DatabaseError
                        where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE
                    {
                        throw StorageError.duplicateSignatureID(entry.signatureID)
                    }
                    if entry.authLevel < 0, let id = item.approvalID { requestEvents.append((entry.seq, id)) }
                }
                // The leaves' own hashes are not stored: a proof reads them from their entries' JWS
                // (half the tree's rows). The nodes go in, in order, by statements of several rows.
                let nodes = commit.nodes.filter { $0.node.level > 0 }
                var nodesDone = 0
                while nodesDone < nodes.count {
                    let count = SQLiteRowsInsert.rowsPerStatement(remaining: nodes.count - nodesDone)
                    do {
                        try SQLiteParameters.execute(db.cachedStatement(sql: Self.treeInsert.sql(rows: count)), bytes: &bytes) { row in
                            for (node, nodeHash) in nodes[nodesDone..<nodesDone + count] {
                                row.add(node.storageIndex); row.add(blob: nodeHash)
                            }
                        }
                    } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                        throw StorageError.ledgerTreeBroken(Self.nodesPastTheEnd(seq))
                    }
                    nodesDone += count
                }
                for checkpoint in commit.checkpoints {
                    try Self.insertLogCheckpoint(checkpoint, db)
                }
                for name in named {
                    try self.reseal(db, name)
                }
                try self.bindApprovals(requestEvents, requests, db)
                return .commit
            }
        }
        // Committed (durably: synchronous = FULL), or rolled back with the tail found.
        return outcome ?? .committed(commit.entries(createdAt: Date(storageSeconds: createdSeconds)))
    }

    /// Throws ``StorageError/signingKeyRevoked(_:)`` for the first kid of `entries` that is
    /// revoked. Called inside the batch's immediate transaction, so no revocation can come
    /// between this check and the inserts (schema v18 dropped the per-row trigger).
    static func refuseRevokedKeys(_ entries: [LedgerEntry], _ db: Database) throws {
        let revoked = try db.cachedStatement(sql: "SELECT 1 FROM signing_keys WHERE kid = ? AND revoked_at IS NOT NULL")
        var checked: [String] = []
        for entry in entries where !checked.contains(entry.kid) {
            checked.append(entry.kid)
            if try revoked.hasRow(bindingText: entry.kid) {
                throw StorageError.signingKeyRevoked(entry.kid)
            }
        }
    }

    /// The storage index of the last node a tree of `size` leaves has: the highest subtree its
    /// last leaf completes (-1 for an empty tree).
    static func lastTreeIndex(size: Int64) -> Int64 {
        guard size > 0 else { return -1 }
        let level = Int((~(size - 1)).trailingZeroBitCount)
        return MerkleNode(level: level, index: (size - 1) >> level).storageIndex
    }

    /// Why a batch's tree node is stored already: a tree with nodes of leaves past the ledger's
    /// last entry, `size` (entries were removed behind the daemon's back).
    static func nodesPastTheEnd(_ size: Int64) -> String {
        "the tree has leaves past the ledger's last entry \(size): entries were removed"
    }

    /// The users named by `batch`'s events whose records pass their check now, to be sealed
    /// again, bound to the new events, once those are in. A record that fails stays as it is.
    func usersToBind(_ db: Database, _ batch: [LedgerAppend]) throws -> [String] {
        try LedgerAppend.usersNamedByEvents(batch).filter { name in
            guard let user = try checkedUser(db, name) else { return false }
            return user.sealFailure == nil
        }
    }

    static func insertLogCheckpoint(_ checkpoint: LogCheckpointRecord, _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO log_checkpoints (size, instance, note, created_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (size, instance) DO NOTHING
            """, arguments: [checkpoint.size, checkpoint.instance, checkpoint.note, checkpoint.createdAt.storageSeconds])
    }

    /// A batch's tree nodes, inserted several rows a statement.
    static let treeInsert = SQLiteRowsInsert(table: "ledger_tree", columns: "id, hash", columnCount: 2)

    static let selectTreeNode = "SELECT hash FROM ledger_tree WHERE id = ?"
    static let selectLeafJWS = "SELECT jws FROM ledger WHERE seq = ?"

    /// The stored hash of `node`: a subtree's from `ledger_tree`, a leaf's made from its
    /// entry's JWS (leaves are not stored; a ledger upgraded from before keeps the ones it had,
    /// unread). Nil when the store has neither.
    static func treeHash(_ node: MerkleNode, _ db: Database) throws -> [UInt8]? {
        if node.level == 0 {
            guard let jws = try String.fetchOne(db.cachedStatement(sql: selectLeafJWS), arguments: [node.index + 1]) else {
                return nil
            }
            return MerkleHash.leaf(jws.utf8)
        }
        return try Data.fetchOne(db.cachedStatement(sql: selectTreeNode), arguments: [node.storageIndex]).map { [UInt8]($0) }
    }

    /// Makes the Merkle tree of the entries already in the ledger (the upgrade to schema v8),
    /// one entry at a time in seq order: the same hashes an append would have stored.
    static func buildTree(_ db: Database) throws {
        var frontier = MerkleFrontier()
        let insert = try db.makeStatement(sql: treeInsert.sql(rows: 1))
        let rows = try Row.fetchCursor(db, sql: "SELECT seq, jws FROM ledger ORDER BY seq")
        while let row = try rows.next() {
            let seq: Int64 = try row.decode(atIndex: 0)
            let jws: String = try row.decode(atIndex: 1)
            guard seq == frontier.size + 1 else {
                throw StorageError.ledgerTreeBroken("entry \(seq) follows entry \(frontier.size): the ledger has a gap")
            }
            for (node, hash) in frontier.append(leafHash: MerkleHash.leaf(jws.utf8)) where node.level > 0 {
                try insert.execute(arguments: [node.storageIndex, Data(hash)])
            }
        }
    }

    public func ledgerTreeHashes(_ nodes: [MerkleNode]) async throws -> [MerkleNode: [UInt8]] {
        try await pool.read { db in try Self.readTreeHashes(nodes, db) }
    }

    static func readTreeHashes(_ nodes: [MerkleNode], _ db: Database) throws -> [MerkleNode: [UInt8]] {
        var hashes: [MerkleNode: [UInt8]] = [:]
        for node in nodes {
            if let hash = try treeHash(node, db) { hashes[node] = hash }
        }
        return hashes
    }

    /// The hashes `plan` makes, from the stored tree.
    static func readPlan(_ plan: MerkleProofPlan, _ db: Database) throws -> [[UInt8]] {
        do {
            return try plan.hashes(try readTreeHashes(plan.nodes, db))
        } catch let error as MerkleTreeError {
            throw StorageError.ledgerTreeBroken("\(error)")
        }
    }

    /// One snapshot, one hop: a proof served through the socket costs one read.
    public func ledgerInclusionRead(signatureID: String, treeSize: @escaping @Sendable (LedgerEntry) -> Int64?) async throws
        -> LedgerInclusionRead? {
        try await pool.read { db in
            guard let entry = try Self.readEntry(signatureID: signatureID, db) else { return nil }
            guard let size = treeSize(entry), size > entry.seq - 1 else { return LedgerInclusionRead(entry: entry, proof: nil) }
            let hashes = try Self.readPlan(MerkleTree.inclusionPlan(index: entry.seq - 1, size: size), db)
            return LedgerInclusionRead(entry: entry, proof: LedgerInclusionRead.Proof(
                treeSize: size, hashes: hashes, cosignatures: try Self.readCosignatures(size: size, db)))
        }
    }

    /// One snapshot, one hop.
    public func ledgerConsistencyRead(from oldSize: Int64, to newSize: Int64) async throws -> LedgerConsistencyRead {
        try await pool.read { db in
            let rootPlan = MerkleTree.rootPlan(size: newSize)
            let proofPlan = MerkleTree.consistencyPlan(from: oldSize, to: newSize)
            let read = try Self.readTreeHashes(rootPlan.nodes + proofPlan.nodes, db)
            do {
                return LedgerConsistencyRead(
                    count: try Self.readLedgerTail(db).0,
                    root: try rootPlan.hashes(read).first ?? MerkleHash.emptyRoot,
                    hashes: try proofPlan.hashes(read),
                    cosignatures: try Self.readCosignatures(size: newSize, db))
            } catch let error as MerkleTreeError {
                throw StorageError.ledgerTreeBroken("\(error)")
            }
        }
    }

    /// The last entry's sequence number and hash, or (0, genesis) for an empty ledger.
    /// An index lookup on the rowid: its cost does not grow with the ledger.
    static func readLedgerTail(_ db: Database) throws -> (Int64, [UInt8]) {
        let statement = try db.cachedStatement(sql: "SELECT seq, entry_hash FROM ledger ORDER BY seq DESC LIMIT 1")
        let tail = try statement.firstRow { row in
            guard let seq = try SQLiteColumn.int64(row, 0, table: "ledger") else {
                throw StorageError.malformedRow(table: "ledger", detail: "the last row's seq is NULL")
            }
            return (seq, try SQLiteColumn.bytes(row, 1, table: "ledger"))
        }
        return tail ?? (0, LedgerChain.genesisHash)
    }

    public func ledgerEntry(signatureID: String) async throws -> LedgerEntry? {
        try await pool.read { db in try Self.readEntry(signatureID: signatureID, db) }
    }

    static func readEntry(signatureID: String, _ db: Database) throws -> LedgerEntry? {
        let statement = try db.cachedStatement(sql: "SELECT \(ledgerColumns) FROM ledger WHERE signature_id = ?")
        return try Row.fetchOne(statement, arguments: [signatureID]).map(decodeLedgerEntry)
    }

    public func ledgerCount() async throws -> Int64 {
        try await pool.read { db in
            try Int64.fetchOne(db.cachedStatement(sql: "SELECT seq FROM ledger ORDER BY seq DESC LIMIT 1")) ?? 0
        }
    }

    public func ledgerSignatureCount() async throws -> Int64 {
        try await pool.read { db in
            try Int64.fetchOne(db.cachedStatement(sql: """
                SELECT coalesce((SELECT seq FROM ledger ORDER BY seq DESC LIMIT 1), 0)
                     - (SELECT count(*) FROM ledger WHERE auth_level < 0)
                """)) ?? 0
        }
    }

    public func ledgerEntries(afterSeq: Int64, limit: Int) async throws -> [LedgerEntry] {
        guard limit > 0 else { return [] }
        return try await pool.read { db in
            let statement = try db.cachedStatement(
                sql: "SELECT \(Self.ledgerColumns) FROM ledger WHERE seq > ? ORDER BY seq LIMIT ?"
            )
            return try Row.fetchAll(statement, arguments: [afterSeq, limit]).map(Self.decodeLedgerEntry)
        }
    }

    public func ledgerEvents(user: String, afterSeq: Int64, limit: Int) async throws -> [LedgerEntry] {
        guard limit > 0 else { return [] }
        return try await pool.read { db in
            let statement = try db.cachedStatement(sql: """
                SELECT \(Self.ledgerColumns) FROM ledger WHERE auth_level < 0 AND user_name = ? AND seq > ?
                ORDER BY seq LIMIT ?
                """)
            return try Row.fetchAll(statement, arguments: [user, afterSeq, limit]).map(Self.decodeLedgerEntry)
        }
    }

    static func insertCheckpoint(_ checkpoint: LedgerCheckpointRecord, _ db: Database) throws {
        do {
            try db.cachedStatement(sql: """
                INSERT INTO ledger_checkpoints (seq, entry_hash, kid, jws, created_at) VALUES (?, ?, ?, ?, ?)
                """).execute(arguments: [checkpoint.seq, Data(checkpoint.entryHash), checkpoint.kid, checkpoint.jws,
                                         checkpoint.createdAt.storageSeconds])
        } catch let error as DatabaseError where error.message == SQLiteSchema.revokedKeyMessage {
            throw StorageError.signingKeyRevoked(checkpoint.kid)
        }
    }

    public func appendCheckpoint(_ checkpoint: LedgerCheckpointRecord) async throws {
        try await withTaskExecutorPreference(ledgerThread) {
            try pool.write { db in try Self.insertCheckpoint(checkpoint, db) }
        }
    }

    public func appendLogCheckpoint(_ checkpoint: LogCheckpointRecord) async throws {
        try await withTaskExecutorPreference(ledgerThread) {
            try pool.write { db in try Self.insertLogCheckpoint(checkpoint, db) }
        }
    }

    public func logCheckpoints(afterSize: Int64, throughSize: Int64?) async throws -> [LogCheckpointRecord] {
        try await pool.read { db in try Self.readLogCheckpoints(afterSize: afterSize, throughSize: throughSize ?? .max, db) }
    }

    static func readLogCheckpoints(afterSize: Int64, throughSize: Int64, _ db: Database) throws -> [LogCheckpointRecord] {
        try Row.fetchAll(db, sql: """
            SELECT size, instance, note, created_at FROM log_checkpoints WHERE size > ? AND size <= ? ORDER BY size, instance
            """, arguments: [afterSize, throughSize]).map { row in
            do {
                return LogCheckpointRecord(size: try row.decode(atIndex: 0), instance: try row.decode(atIndex: 1),
                                           note: try row.decode(atIndex: 2),
                                           createdAt: Date(storageSeconds: try row.decode(atIndex: 3)))
            } catch {
                throw StorageError.malformedRow(table: "log_checkpoints", detail: "\(error)")
            }
        }
    }

    public func claimLogOrigin(_ origin: String) async throws -> String {
        try await withTaskExecutorPreference(ledgerThread) {
            try pool.write { db in
                try db.execute(sql: "INSERT INTO log_origin (id, origin) VALUES (1, ?) ON CONFLICT (id) DO NOTHING",
                               arguments: [origin])
                return try String.fetchOne(db, sql: "SELECT origin FROM log_origin WHERE id = 1") ?? origin
            }
        }
    }

    public func addLogCosignatures(_ cosignatures: [LogCosignatureRecord]) async throws {
        try await withTaskExecutorPreference(ledgerThread) {
            try pool.write { db in
                for cosignature in cosignatures {
                    try db.execute(sql: """
                        INSERT INTO log_cosignatures (size, witness, line, created_at) VALUES (?, ?, ?, ?)
                        ON CONFLICT (size, witness, line) DO NOTHING
                        """, arguments: [cosignature.size, cosignature.witness, cosignature.line,
                                         cosignature.createdAt.storageSeconds])
                }
            }
        }
    }

    public func logCosignatures(size: Int64) async throws -> [LogCosignatureRecord] {
        try await pool.read { db in try Self.readCosignatures(size: size, db) }
    }

    static func readCosignatures(size: Int64, _ db: Database) throws -> [LogCosignatureRecord] {
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT size, witness, line, created_at FROM log_cosignatures WHERE size = ? ORDER BY witness, line
            """), arguments: [size]).map { row in
            do {
                return LogCosignatureRecord(size: try row.decode(atIndex: 0), witness: try row.decode(atIndex: 1),
                                            line: try row.decode(atIndex: 2),
                                            createdAt: Date(storageSeconds: try row.decode(atIndex: 3)))
            } catch {
                throw StorageError.malformedRow(table: "log_cosignatures", detail: "\(error)")
            }
        }
    }

    public func logOrigin() async throws -> String? {
        try await pool.read { db in try String.fetchOne(db, sql: "SELECT origin FROM log_origin WHERE id = 1") }
    }

    public func logEpochs() async throws -> [LogEpochRecord] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT epoch, origin, first_index, created_at FROM log_epochs ORDER BY epoch").map { row in
                do {
                    return LogEpochRecord(epoch: try row.decode(atIndex: 0), origin: try row.decode(atIndex: 1),
                                          firstIndex: try row.decode(atIndex: 2),
                                          createdAt: Date(storageSeconds: try row.decode(atIndex: 3)))
                } catch {
                    throw StorageError.malformedRow(table: "log_epochs", detail: "\(error)")
                }
            }
        }
    }

    public func addLogEpoch(_ epoch: LogEpochRecord) async throws {
        try await withTaskExecutorPreference(ledgerThread) {
            try pool.write { db in
                do {
                    try db.execute(sql: "INSERT INTO log_epochs (epoch, origin, first_index, created_at) VALUES (?, ?, ?, ?)",
                                   arguments: [epoch.epoch, epoch.origin, epoch.firstIndex, epoch.createdAt.storageSeconds])
                } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                    throw StorageError.logEpochExists(epoch.epoch)
                }
            }
        }
    }

    public func ledgerCheckpoints(afterSeq: Int64, throughSeq: Int64?) async throws -> [LedgerCheckpointRecord] {
        try await pool.read { db in try Self.readCheckpoints(afterSeq: afterSeq, throughSeq: throughSeq ?? .max, db) }
    }

    static func readCheckpoints(afterSeq: Int64, throughSeq: Int64, _ db: Database) throws -> [LedgerCheckpointRecord] {
        try Row.fetchAll(db, sql: """
            SELECT seq, entry_hash, kid, jws, created_at FROM ledger_checkpoints WHERE seq > ? AND seq <= ? ORDER BY seq, id
            """, arguments: [afterSeq, throughSeq]).map { row in
            do {
                return LedgerCheckpointRecord(
                    seq: try row.decode(atIndex: 0), entryHash: [UInt8](try row.decode(Data.self, atIndex: 1)),
                    kid: try row.decode(atIndex: 2), jws: try row.decode(atIndex: 3),
                    createdAt: Date(storageSeconds: try row.decode(atIndex: 4))
                )
            } catch {
                throw StorageError.malformedRow(table: "ledger_checkpoints", detail: "\(error)")
            }
        }
    }

    public func ledgerHead() async throws -> LedgerHead {
        try await pool.read { db in
            let (seq, hash) = try Self.readLedgerTail(db)
            return LedgerHead(seq: seq, entryHash: hash)
        }
    }

    /// Streams the stored checkpoints and then the ledger, from one read snapshot and 1024 rows
    /// at a time, through ``LedgerVerifier``. A row whose columns cannot be read (hand-edited
    /// types) counts as a broken entry, not as an error. A checkpoint row that cannot be read
    /// is passed on as text that does not verify.
    public func auditLedger(options: LedgerVerifier.Options) async throws -> LedgerAudit {
        try await pool.read { db in
            var verifier = LedgerVerifier(options: options)
            let checkpoints = try Row.fetchCursor(db, sql: "SELECT jws FROM ledger_checkpoints ORDER BY seq, id")
            while let row = try checkpoints.next() {
                verifier.addCheckpoint((try? row.decode(String.self, atIndex: 0)) ?? "")
            }
            let notes = try Row.fetchCursor(db, sql: "SELECT note FROM log_checkpoints ORDER BY size, instance")
            while let row = try notes.next() {
                verifier.addLogCheckpoint((try? row.decode(String.self, atIndex: 0)) ?? "")
            }
            let cursor = try Row.fetchCursor(db, sql: """
                SELECT seq, signature_id, jws, prev_hash, entry_hash, user_name, kid, iat, peer_uid, peer_pid, peer_comm
                FROM ledger ORDER BY seq
                """)
            // Rows go to the verifier 1024 at a time, so it can check their signatures on every core.
            var batch: [LedgerLink] = []
            batch.reserveCapacity(1024)
            while let row = try cursor.next() {
                let peer: SignaturePeer? = if let uid = try? row.decode(UInt32.self, atIndex: 8),
                                              let pid = try? row.decode(Int32.self, atIndex: 9),
                                              let comm = try? row.decode(String.self, atIndex: 10) {
                    SignaturePeer(uid: uid, pid: pid, comm: comm)
                } else { nil }
                let link = LedgerLink(
                    seq: (try? row.decode(Int64.self, atIndex: 0)) ?? 0,
                    signatureID: (try? row.decode(String.self, atIndex: 1)) ?? "",
                    payloadSignature: (try? row.decode(String.self, atIndex: 2)) ?? "",
                    prevHash: (try? row.decode(Data.self, atIndex: 3)).map { [UInt8]($0) } ?? [],
                    entryHash: (try? row.decode(Data.self, atIndex: 4)).map { [UInt8]($0) } ?? [],
                    user: (try? row.decode(String.self, atIndex: 5)) ?? "",
                    kid: (try? row.decode(String.self, atIndex: 6)) ?? "",
                    iat: (try? row.decode(Int64.self, atIndex: 7)) ?? -1,
                    peer: peer ?? SignaturePeer(uid: .max, pid: -1, comm: "")
                )
                batch.append(link)
                if batch.count == 1024 {
                    guard verifier.add(contentsOf: batch) else { return verifier.finish() }
                    batch.removeAll(keepingCapacity: true)
                }
            }
            verifier.add(contentsOf: batch)
            return verifier.finish()
        }
    }
}
