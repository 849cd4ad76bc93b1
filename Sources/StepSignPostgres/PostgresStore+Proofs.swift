import Logging
import StepSignFormat
import StepSignStorage

// A proof of the log (SPEC §5.5) read on one connection: the entry, the tree's hashes and the
// cosignatures of the checkpoint's size, one lease and three statements. The tree below a size
// and the cosignatures are only ever added to, so the statements need no shared snapshot.
extension PostgresStore {
    public func ledgerInclusionRead(signatureID: String, treeSize: @escaping @Sendable (LedgerEntry) -> Int64?) async throws
        -> LedgerInclusionRead? {
        try await withConnection { connection in
            guard let entry = try await Self.entry(signatureID: signatureID, connection, logger: logger) else { return nil }
            guard let size = treeSize(entry), size > entry.seq - 1 else { return LedgerInclusionRead(entry: entry, proof: nil) }
            let plan = MerkleTree.inclusionPlan(index: entry.seq - 1, size: size)
            let hashes = try Self.hashes(plan, try await Self.treeHashes(plan.nodes, connection, logger: logger))
            return LedgerInclusionRead(entry: entry, proof: LedgerInclusionRead.Proof(
                treeSize: size, hashes: hashes, cosignatures: try await Self.cosignatures(size: size, connection, logger: logger)))
        }
    }

    public func ledgerConsistencyRead(from oldSize: Int64, to newSize: Int64) async throws -> LedgerConsistencyRead {
        try await withConnection { connection in
            let count = try await Self.readTail(connection, logger: logger).0
            let rootPlan = MerkleTree.rootPlan(size: newSize)
            let proofPlan = MerkleTree.consistencyPlan(from: oldSize, to: newSize)
            let read = try await Self.treeHashes(rootPlan.nodes + proofPlan.nodes, connection, logger: logger)
            return LedgerConsistencyRead(count: count, root: try Self.hashes(rootPlan, read).first ?? MerkleHash.emptyRoot,
                                         hashes: try Self.hashes(proofPlan, read),
                                         cosignatures: try await Self.cosignatures(size: newSize, connection, logger: logger))
        }
    }

    /// The hashes `plan` makes of the tree's hashes `read`; ``StorageError/ledgerTreeBroken(_:)``
    /// when one it needs is missing.
    static func hashes(_ plan: MerkleProofPlan, _ read: [MerkleNode: [UInt8]]) throws -> [[UInt8]] {
        do {
            return try plan.hashes(read)
        } catch {
            throw StorageError.ledgerTreeBroken("\(error)")
        }
    }
}
