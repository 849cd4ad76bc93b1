import Foundation
import GRDB
import StepSignCrypto
import StepSignFormat
import Testing
@testable import StepSignPostgres
@testable import StepSignStorage

/// The ledger as a Merkle log in both stores (SPEC §5.5): the tree is written in the batch's
/// transaction, its roots and proofs at every size are RFC 9162's over the entries' JWS bytes
/// (computed here from the entries alone), several writers extend one tree, and an old ledger
/// gets its tree on upgrade.
@Suite struct MerkleLogTests {
    /// RFC 9162's MTH over leaf hashes, written out as the RFC states it.
    static func mth(_ leaves: ArraySlice<[UInt8]>) -> [UInt8] {
        switch leaves.count {
        case 0: return SHA256.hash([UInt8]())
        case 1: return leaves.first!
        default:
            var k = 1
            while k * 2 < leaves.count { k *= 2 }
            return MerkleHash.node(mth(leaves.prefix(k)), mth(leaves.dropFirst(k)))
        }
    }

    /// The leaf hashes of the stored entries, SHA-256(0x00 ‖ JWS), in seq order.
    static func leaves(_ store: any StepSignStore) async throws -> [[UInt8]] {
        try await store.ledgerEntries(afterSeq: 0, limit: 100_000).map { entry in
            SHA256.hash([0x00] + Array(entry.jws.utf8))
        }
    }

    /// Every root from 0 to the ledger's size, and inclusion and consistency proofs at a spread
    /// of sizes, checked against the leaves.
    static func expectTreeMatches(_ store: any StepSignStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let leaves = try await leaves(store)
        let entries = try await store.ledgerEntries(afterSeq: 0, limit: 100_000)
        let size = leaves.count
        for n in 0...size {
            #expect(try await store.ledgerRoot(size: Int64(n)) == mth(leaves.prefix(n)), "root of \(n)",
                    sourceLocation: sourceLocation)
        }
        for n in Set([1, 2, 3, 7, 8, 9, size / 2, size - 1, size]) where n >= 1 && n <= size {
            let root = mth(leaves.prefix(n))
            for index in Set([0, n / 3, n / 2, n - 1]) {
                let proof = try await store.ledgerInclusionProof(index: Int64(index), size: Int64(n))
                #expect(MerkleProof.verifyInclusion(leafHash: leaves[index], index: Int64(index), size: Int64(n),
                                                    proof: proof, root: root),
                        "leaf \(index) of \(n)", sourceLocation: sourceLocation)
                // The same proof read in one snapshot with its entry, found by signature ID.
                let read = try await store.ledgerInclusionRead(signatureID: entries[index].signatureID) { _ in Int64(n) }
                #expect(read?.entry == entries[index] && read?.proof?.treeSize == Int64(n) && read?.proof?.hashes == proof,
                        "leaf \(index) of \(n), one read", sourceLocation: sourceLocation)
            }
            for old in Set([1, n / 2, n]) where old >= 1 {
                let proof = try await store.ledgerConsistencyProof(from: Int64(old), to: Int64(n))
                #expect(MerkleProof.verifyConsistency(oldSize: Int64(old), newSize: Int64(n),
                                                      oldRoot: mth(leaves.prefix(old)), newRoot: root, proof: proof),
                        "\(old) → \(n)", sourceLocation: sourceLocation)
                let read = try await store.ledgerConsistencyRead(from: Int64(old), to: Int64(n))
                #expect(read == LedgerConsistencyRead(count: Int64(size), root: root, hashes: proof, cosignatures: []),
                        "\(old) → \(n), one read", sourceLocation: sourceLocation)
            }
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func batchesOfEverySizeMakeTheRFCsTree(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            #expect(try await store.ledgerRoot(size: 0) == MerkleHash.emptyRoot)
            var next = 1
            for count in [1, 1, 2, 3, 8, 17, 32, 1, 64] {
                _ = try await store.appendLedger(ledgerBatch(next..<next + count))
                next += count
            }
            #expect(try await store.ledgerCount() == 129)
            try await Self.expectTreeMatches(store)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aBatchWithACheckpointInItExtendsTheTreeToo(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            let signer = TestCheckpointSigner(every: 4)
            for start in stride(from: 1, to: 31, by: 6) {
                _ = try await store.appendLedger(ledgerBatch(start..<start + 6), checkpoints: signer)
            }
            try await Self.expectTreeMatches(store)
            // A checkpoint at every fourth size, each proven from the one before, with the root
            // of the tree of its size, stored in the batch's transaction.
            #expect(signer.signedSizes == [4, 8, 12, 16, 20, 24, 28])
            let notes = try await store.logCheckpoints(afterSize: 0, throughSize: nil)
            #expect(notes.map(\.size) == [4, 8, 12, 16, 20, 24, 28])
            for note in notes {
                #expect(note.note == "note \(note.size) \(Hex.encode(try await store.ledgerRoot(size: note.size)))\n")
            }
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func writersAtOnceExtendOneTree(_ backend: StoreBackend) async throws {
        try await withStores(backend, count: 3) { stores async throws in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (number, store) in stores.enumerated() {
                    group.addTask {
                        for round in 0..<10 {
                            let start = 1 + (number * 10 + round) * 5
                            _ = try await store.appendLedger(ledgerBatch(start..<start + 5))
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await stores[0].ledgerCount() == 150)
            try await Self.expectTreeMatches(stores[1])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aProofBeyondTheLogIsRefused(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            _ = try await store.appendLedger(ledgerBatch(1..<6))
            await #expect(throws: StorageError.self) { try await store.ledgerRoot(size: 6) }
            await #expect(throws: StorageError.self) { try await store.ledgerInclusionProof(index: 2, size: 9) }
            await #expect(throws: StorageError.self) { try await store.ledgerConsistencyProof(from: 3, to: 8) }
            await #expect(throws: StorageError.self) { try await store.ledgerConsistencyRead(from: 3, to: 8) }
            let third = try await store.ledgerEntries(afterSeq: 2, limit: 1)[0]
            await #expect(throws: StorageError.self) {
                try await store.ledgerInclusionRead(signatureID: third.signatureID) { _ in 9 }
            }
        }
    }

    /// A proof read with its entry (SPEC §5.5, one read per request): only for the size the
    /// caller names from the entry, with that size's cosignatures; none for an unknown ID.
    @Test(arguments: StoreBackend.allCases)
    func aProofIsReadWithItsEntryOnlyWhenTheCallerNamesASize(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            let entries = try await store.appendLedger(ledgerBatch(1..<8))
            let cosignature = LogCosignatureRecord(size: 7, witness: "w1", line: "— w1 AAAA", createdAt: epoch)
            try await store.addLogCosignatures([cosignature])
            #expect(try await store.ledgerInclusionRead(signatureID: "no-such-id") { _ in 7 } == nil)
            let alone = try #require(try await store.ledgerInclusionRead(signatureID: entries[3].signatureID) { _ in nil })
            #expect(alone.entry == entries[3] && alone.proof == nil)
            // A size that does not cover the entry is no proof (not a crash).
            let below = try #require(try await store.ledgerInclusionRead(signatureID: entries[3].signatureID) { $0.seq - 1 })
            #expect(below.entry == entries[3] && below.proof == nil)
            let named = try await store.ledgerInclusionRead(signatureID: entries[3].signatureID) { entry in
                entry.peer.uid == entries[3].peer.uid ? 7 : nil
            }
            #expect(try #require(named).proof == LedgerInclusionRead.Proof(
                treeSize: 7, hashes: try await store.ledgerInclusionProof(index: 3, size: 7), cosignatures: [cosignature]))
            #expect(try await store.ledgerConsistencyRead(from: 2, to: 7).cosignatures == [cosignature])
            #expect(try await store.ledgerConsistencyRead(from: 2, to: 5).cosignatures.isEmpty)
        }
    }

    @Test func anSQLiteLedgerFromBeforeTheTreeGetsItOnUpgrade() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        // A ledger of schema v7 (before the tree), written as that version did.
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let path = directory.path + "/" + SQLiteStore.fileName
        do {
            let queue = try DatabaseQueue(path: path)
            try SQLiteSchema.migrator.migrate(queue, upTo: "v7-sealed-credentials")
            try await queue.write { db in
                var previous = LedgerChain.genesisHash
                for item in ledgerBatch(1..<301) {
                    let seq = Int64(item.iat - 1_750_000_000)
                    let hash = LedgerChain.entryHash(previous: previous, jws: item.jws)
                    try db.execute(sql: """
                        INSERT INTO ledger (\(SQLiteStore.ledgerColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, arguments: [seq, item.signatureID, item.user, item.iat, item.kid, item.jws, Data(previous),
                                         Data(hash), item.peer.uid, item.peer.pid, item.peer.comm, item.authLevel, 0.0])
                    previous = hash
                }
            }
            try queue.close()
        }
        let store = try directory.open()
        try await Self.expectTreeMatches(store)
        // Appends go on from the tree the upgrade made.
        _ = try await store.appendLedger(ledgerBatch(301..<304))
        #expect(try await store.ledgerRoot(size: 303) == Self.mth(try await Self.leaves(store)[...]))
        try await store.close()
    }

    @Test(.enabled(if: PostgresTestServer.enabled))
    func aPostgreSQLLedgerFromBeforeTheTreeGetsItOnUpgrade() async throws {
        try await withPostgresDatabase { database in
            let store = try await database.open()
            // Back to schema v7 by hand, as that version left it: v3's append (v20 dropped it, with
            // v8's stepsign_tree_append), no tree, no v9 to v20 (v19 changed only log_cosignatures'
            // key; the table goes with v10).
            for statement in ["DELETE FROM stepsign_schema_migrations WHERE version = 20",
                              "DELETE FROM stepsign_schema_migrations WHERE version = 19",
                              "DELETE FROM stepsign_schema_migrations WHERE version = 18",
                              "DROP PROCEDURE stepsign_ledger_commit", "DROP FUNCTION stepsign_ledger_insert",
                              "DELETE FROM stepsign_schema_migrations WHERE version = 17",
                              "ALTER TABLE device_keys DROP COLUMN fido2_credential_id",
                              "ALTER TABLE device_keys DROP COLUMN fido2_sign_count",
                              "DELETE FROM stepsign_schema_migrations WHERE version = 16",
                              "DROP TABLE idempotency_keys", "DELETE FROM stepsign_schema_migrations WHERE version = 15",
                              "DROP TABLE approval_events", "ALTER TABLE users DROP COLUMN name_key",
                              "DELETE FROM store_secrets WHERE name = 'approval_state_seals'",
                              "DELETE FROM stepsign_schema_migrations WHERE version = 14",
                              "DROP TABLE attempt_reservations", "DELETE FROM stepsign_schema_migrations WHERE version = 13",
                              "DROP TABLE log_epochs", "DELETE FROM stepsign_schema_migrations WHERE version = 12",
                              "DROP TABLE group_members", "DROP TABLE approval_votes", "DROP TABLE approvals",
                              "DELETE FROM stepsign_schema_migrations WHERE version = 11",
                              "DROP TABLE log_cosignatures", "DELETE FROM stepsign_schema_migrations WHERE version = 10",
                              "DROP TABLE log_checkpoints", "DROP TABLE log_origin",
                              "DELETE FROM stepsign_schema_migrations WHERE version = 9",
                              "DROP TABLE ledger_tree", PostgresSchema.ledgerAppendV3,
                              "DROP FUNCTION stepsign_tree_index(integer, bigint)",
                              "DELETE FROM stepsign_schema_migrations WHERE version = 8"] {
                try await PostgresTestServer.administer(statement, database: database.name)
            }
            // The entries ledgerBatch(1..<25_001) makes, appended as v7 did (its function numbers,
            // chains and hashes them in the database).
            for start in stride(from: 1, to: 25_001, by: 1000) {
                let rows = "FROM generate_series(\(start), \(start + 999)) AS i"
                _ = try await PostgresTestServer.administer("""
                    SELECT * FROM stepsign_ledger_append(
                        ARRAY(SELECT '0190a0b0-0000-7000-8000-' || lpad(i::text, 12, '0') \(rows) ORDER BY i),
                        ARRAY(SELECT 'alice' \(rows)), ARRAY(SELECT 1750000000 + i::bigint \(rows) ORDER BY i),
                        ARRAY(SELECT 'kid-1' \(rows)),
                        ARRAY(SELECT 'eyJhbGciOiJFUzI1NiJ9.eyJqdGkiOiJ' || i || 'In0.sig' || i \(rows) ORDER BY i),
                        ARRAY(SELECT 1000::bigint \(rows)), ARRAY(SELECT 4242 \(rows)), ARRAY(SELECT 'tester' \(rows)),
                        ARRAY(SELECT 1 \(rows)), now())
                    """, database: database.name)
            }
            #expect(try await store.ledgerEntries(afterSeq: 0, limit: 1).first?.signatureID == ledgerAppend(1).signatureID)
            try await store.close()
            // The upgrade makes the tree of the 25,000 entries (10,000 per call).
            let upgraded = try await database.open()
            let leaves = try await Self.leaves(upgraded)
            #expect(leaves.count == 25_000)
            for size in [1, 9_999, 10_000, 10_001, 20_000, 25_000] {
                #expect(try await upgraded.ledgerRoot(size: Int64(size)) == Self.mth(leaves.prefix(size)), "root of \(size)")
            }
            _ = try await upgraded.appendLedger(ledgerBatch(25_001..<25_004))
            #expect(try await upgraded.ledgerRoot(size: 25_003) == Self.mth(try await Self.leaves(upgraded)[...]))
            try await upgraded.close()
        }
    }

    @Test func aTreeMissingAHashStopsAppendsInsteadOfGrowingAWrongTree() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        let store = try directory.open()
        _ = try await store.appendLedger(ledgerBatch(1..<8))
        try await store.close()
        // Someone with the file removes the hash of the subtree of leaves 4…5.
        let queue = try DatabaseQueue(path: directory.path + "/" + SQLiteStore.fileName)
        try await queue.write { db in
            try db.execute(sql: "DROP TRIGGER ledger_tree_no_delete")
            try db.execute(sql: "DELETE FROM ledger_tree WHERE id = ?", arguments: [MerkleNode(level: 1, index: 2).storageIndex])
        }
        try queue.close()
        let reopened = try directory.open()
        await #expect(throws: StorageError.ledgerTreeBroken("the hash of the subtree (1, 2) is missing")) {
            try await reopened.appendLedger(ledgerBatch(8..<9))
        }
        #expect(try await reopened.ledgerCount() == 7)
        try await reopened.close()
    }

    @Test func leavesAreNotStoredAndAreReadFromTheirEntries() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        let store = try directory.open()
        _ = try await store.appendLedger(ledgerBatch(1..<12))
        let leaves = try await Self.leaves(store)
        // The tree holds the 8 subtrees 11 leaves complete (11 − popcount 11), no leaf; a leaf's hash is its
        // entry's, for the proofs and the tiles.
        let hashes = try await store.ledgerTreeHashes([MerkleNode(level: 0, index: 10), MerkleNode(level: 1, index: 4)])
        #expect(hashes[MerkleNode(level: 0, index: 10)] == leaves[10])
        #expect(hashes[MerkleNode(level: 1, index: 4)] == Self.mth(leaves[8..<10]))
        #expect(try await store.ledgerRoot(size: 11) == Self.mth(leaves[...]))
        try await store.close()
        let queue = try DatabaseQueue(path: directory.path + "/" + SQLiteStore.fileName)
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM ledger_tree") } == 8)
        try queue.close()
    }

    @Test func entriesRemovedBelowSubtreesTheyCompletedStopAppends() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        let store = try directory.open()
        _ = try await store.appendLedger(ledgerBatch(1..<9))
        try await store.close()
        // Someone with the file removes the last two entries (leaves 6 and 7), not their subtrees.
        let queue = try DatabaseQueue(path: directory.path + "/" + SQLiteStore.fileName)
        try await queue.write { db in
            try db.execute(sql: "DROP TRIGGER ledger_no_delete")
            try db.execute(sql: "DELETE FROM ledger WHERE seq > 6")
        }
        try queue.close()
        let reopened = try directory.open()
        await #expect(throws: StorageError.ledgerTreeBroken("the tree has leaves past the ledger's last entry 6: entries were removed")) {
            try await reopened.appendLedger(ledgerBatch(9..<10))
        }
        #expect(try await reopened.ledgerCount() == 6)
        try await reopened.close()
    }
}
