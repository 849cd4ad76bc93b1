import Foundation
import StepSignCrypto
import StepSignFormat
import Testing
@testable import StepSignStorage
import StepSignPostgres

/// One log, whichever store keeps it (SPEC §5, §5.5): the same batches appended to SQLite and
/// to PostgreSQL give the same rows (numbers, chain), the same tree (every complete subtree's
/// hash, each the one its entries make) and the same checkpoint notes.
@Suite(.enabled(if: PostgresTestServer.enabled))
struct CrossStoreLogTests {
    /// Batches of uneven sizes, so checkpoints (every 4 entries) fall at a batch's start, middle
    /// and end, and subtrees close across batches.
    static let batchSizes = [1, 3, 7, 1, 16, 5, 2, 9]

    /// Appends the batches with a checkpoint signer, and returns what the store then holds.
    static func appendAll(to store: any StepSignStore) async throws
        -> (entries: [LedgerEntry], nodes: [MerkleNode: [UInt8]], notes: [String]) {
        let signer = TestCheckpointSigner(every: 4)
        var next = 0
        for size in batchSizes {
            _ = try await store.appendLedger(ledgerBatch(next..<next + size), checkpoints: signer)
            next += size
        }
        let count = try await store.ledgerCount()
        var nodes: [MerkleNode] = []
        for level in 0..<8 {
            for index in 0..<(count >> level) { nodes.append(MerkleNode(level: level, index: index)) }
        }
        return (try await store.ledgerEntries(afterSeq: 0, limit: 1000), try await store.ledgerTreeHashes(nodes),
                try await store.logCheckpoints(afterSize: 0, throughSize: nil).map(\.note))
    }

    @Test("the same batches give identical rows, tree nodes and checkpoint notes on SQLite and PostgreSQL")
    func identicalLogs() async throws {
        let sqlite = try await withStore(.sqlite) { store in try await Self.appendAll(to: store) }
        let postgres = try await withStore(.postgresql) { store in try await Self.appendAll(to: store) }
        let total = Self.batchSizes.reduce(0, +)

        #expect(sqlite.entries.count == total && postgres.entries.count == total)
        for (a, b) in zip(sqlite.entries, postgres.entries) {
            #expect(a.seq == b.seq && a.signatureID == b.signatureID && a.jws == b.jws && a.user == b.user && a.kid == b.kid
                    && a.iat == b.iat && a.peer == b.peer && a.authLevel == b.authLevel, "entry \(a.seq)")
            #expect(a.prevHash == b.prevHash && a.entryHash == b.entryHash, "entry \(a.seq)'s chain")
        }
        #expect(sqlite.nodes == postgres.nodes)
        #expect(sqlite.notes == postgres.notes && sqlite.notes.count == total / 4, "\(sqlite.notes) \(postgres.notes)")

        // Each store's tree is the one its entries make.
        var tree = MerkleFrontier()
        var made: [MerkleNode: [UInt8]] = [:]
        for entry in sqlite.entries {
            for (node, hash) in tree.append(leafHash: MerkleHash.leaf(entry.jws.utf8)) { made[node] = hash }
        }
        #expect(made == sqlite.nodes)
        #expect(sqlite.notes.last == "note \(total - total % 4) \(Hex.encode(Self.root(of: sqlite.entries.prefix(total - total % 4))))\n")
    }

    static func root(of entries: ArraySlice<LedgerEntry>) -> [UInt8] {
        var tree = MerkleFrontier()
        for entry in entries { _ = tree.append(leafHash: MerkleHash.leaf(entry.jws.utf8)) }
        return tree.root
    }
}
