import Foundation
import StepSignFormat

/// The log itself (SPEC §5, §5.5): its entries appended in batches (group commit) by the
/// engine's one ledger writer, its tree, checkpoint notes and cosignatures, and the reads a
/// proof or the log's frontier needs. Lookups of single entries, events, the audit and the
/// older JWS checkpoints are ``LedgerLookupStore``'s; the log's origin and epochs are
/// ``LogEpochStore``'s.
public protocol LedgerStore: Sendable {
    // MARK: Ledger

    /// Commits a batch the log core computed (``LedgerCommit``: rows, tree nodes, checkpoint
    /// notes) in one durable transaction, if the log's tail is still the one it was computed on
    /// (SPEC §5, §5.5): the store takes the ledger's lock, compares the last entry's seq and hash
    /// with ``LedgerCommit/expected`` (and the number of log epochs with
    /// ``LedgerCommit/expectedEpochs`` when set), and then only inserts. Answers
    /// ``LedgerCommitOutcome/committed(_:)`` with the entries as stored, only after the commit
    /// is durable, or ``LedgerCommitOutcome/tailMoved(_:epochs:)`` with the log's tail, having
    /// stored nothing. Nothing is stored if it throws.
    ///
    /// The records of the users the batch's events name, and the requests for approval they
    /// name (``LedgerAppend/usersNamedByEvents(_:)``, ``LedgerAppend/approvalsNamedByEvents(_:)``),
    /// are sealed again, bound to those events, in the same transaction (SPEC §5.4).
    ///
    /// A store whose commit blocks (SQLite: a local `fsync`) runs it on ``ledgerExecutor``.
    func commitLedger(_ commit: LedgerCommit) async throws -> LedgerCommitOutcome

    /// The executor on which this store's ledger appends run without a hop, for the task that
    /// calls them to prefer: SQLite's own ledger thread, where its blocking commits run (no
    /// thread of the cooperative pool or an event loop waits on a disk). Nil (PostgreSQL: an
    /// append awaits the network and holds no thread): any.
    var ledgerExecutor: (any TaskExecutor)? { get }

    /// `date` as this store keeps a ledger row's time (SQLite: seconds since 1970 as a double;
    /// PostgreSQL: microseconds). A batch made at a time already so rounded is answered with
    /// its own entries, not copies with the time rounded (``LedgerCommit/entries(createdAt:)``).
    func ledgerTime(_ date: Date) -> Date

    /// Stores a C2SP checkpoint of the log (SPEC §5.5), durably; one of the same size and
    /// instance already stored is kept (the note of a size is made once per daemon).
    func appendLogCheckpoint(_ checkpoint: LogCheckpointRecord) async throws

    /// The stored C2SP checkpoints with a size greater than `afterSize` and at most
    /// `throughSize` (nil: no upper bound), by size.
    func logCheckpoints(afterSize: Int64, throughSize: Int64?) async throws -> [LogCheckpointRecord]

    /// Stores witnesses' cosignatures (SPEC §5.6), durably; one row per size, witness and line
    /// (the same line again is kept as first stored). A row of another line for the same size
    /// and witness (one written behind the daemon's back) does not keep a line out.
    func addLogCosignatures(_ cosignatures: [LogCosignatureRecord]) async throws

    /// The stored cosignatures of the checkpoint of `size`, by witness name then line (byte
    /// order): unchecked claims, possibly several per witness.
    func logCosignatures(size: Int64) async throws -> [LogCosignatureRecord]

    /// The last entry's seq and hash; (0, genesis) when the ledger is empty.
    func ledgerHead() async throws -> LedgerHead

    /// The number of entries, which is the last sequence number (0 when empty).
    func ledgerCount() async throws -> Int64

    /// Up to `limit` entries with sequence numbers greater than `afterSeq`, in order.
    func ledgerEntries(afterSeq: Int64, limit: Int) async throws -> [LedgerEntry]

    /// The stored hashes of `nodes`, complete subtrees of the log's Merkle tree (SPEC §5.5),
    /// from one snapshot; a node the tree does not have (yet) is absent. Roots and proofs of
    /// any size are made of them (``MerkleProofPlan``).
    func ledgerTreeHashes(_ nodes: [MerkleNode]) async throws -> [MerkleNode: [UInt8]]

    /// The entry with this signature ID and, when `treeSize(entry)` names a size (above the
    /// entry's index, at most the log's), its inclusion proof in the tree of that size with the
    /// cosignatures stored for that size: a proof served from one snapshot. Nil when no entry
    /// has this ID.
    func ledgerInclusionRead(signatureID: String, treeSize: @escaping @Sendable (LedgerEntry) -> Int64?) async throws
        -> LedgerInclusionRead?

    /// The log's size, and the root of the tree of `newSize` entries, the consistency proof
    /// from `oldSize` (at most `newSize`) to it and the cosignatures stored for `newSize`, from
    /// one snapshot. ``StorageError/ledgerTreeBroken(_:)`` when the tree lacks a hash they need
    /// (`newSize` past the log's end among them).
    func ledgerConsistencyRead(from oldSize: Int64, to newSize: Int64) async throws -> LedgerConsistencyRead
}

extension LedgerStore {
    /// Appends a batch without checkpoints, computed on the log's tail as stored (its tree
    /// read from the stored nodes), and computed again while other writers move the tail: for
    /// tools and tests, and for the one row the daemon appends to a log it refuses
    /// (`admin.recover`'s event). The daemon's appends go through its log core, which computes
    /// from entries (SPEC §5.5).
    public func appendLedger(_ batch: [LedgerAppend]) async throws -> [LedgerEntry] {
        guard !batch.isEmpty else { return [] }
        while true {
            let head = try await ledgerHead()
            let commit = LedgerCommit(items: batch, after: head, tree: try await ledgerFrontier(size: head.seq), createdAt: Date())
            switch try await commitLedger(commit) {
            case .committed(let entries): return entries
            case .tailMoved: continue
            }
        }
    }

    /// The right edge of the stored tree of `size` entries; ``StorageError/ledgerTreeBroken(_:)``
    /// when the store lacks one of its hashes.
    public func ledgerFrontier(size: Int64) async throws -> MerkleFrontier {
        let nodes = MerkleTree.subtrees(of: 0..<size)
        let stored = try await ledgerTreeHashes(nodes)
        var hashes: [[UInt8]] = []
        for node in nodes {
            guard let hash = stored[node] else { throw StorageError.ledgerTreeBroken("the hash of the subtree \(node) is missing") }
            hashes.append(hash)
        }
        do {
            return try MerkleFrontier(size: size, hashes: hashes)
        } catch {
            throw StorageError.ledgerTreeBroken("\(error)")
        }
    }

    /// The root of the log's Merkle tree of `size` entries (the first `size`), from the stored
    /// tree; ``StorageError/ledgerTreeBroken(_:)`` when it lacks a hash (or has fewer leaves).
    public func ledgerRoot(size: Int64) async throws -> [UInt8] {
        try await treeHashes(MerkleTree.rootPlan(size: size)).first ?? MerkleHash.emptyRoot
    }

    /// The inclusion proof of entry `index + 1` (leaf `index`) in the tree of `size` entries.
    public func ledgerInclusionProof(index: Int64, size: Int64) async throws -> [[UInt8]] {
        try await treeHashes(MerkleTree.inclusionPlan(index: index, size: size))
    }

    /// The consistency proof from the tree of `oldSize` entries to that of `newSize`.
    public func ledgerConsistencyProof(from oldSize: Int64, to newSize: Int64) async throws -> [[UInt8]] {
        try await treeHashes(MerkleTree.consistencyPlan(from: oldSize, to: newSize))
    }

    /// One read after another (a store that can read them in one snapshot does).
    public func ledgerConsistencyRead(from oldSize: Int64, to newSize: Int64) async throws -> LedgerConsistencyRead {
        let count = try await ledgerCount()
        let rootPlan = MerkleTree.rootPlan(size: newSize)
        let proofPlan = MerkleTree.consistencyPlan(from: oldSize, to: newSize)
        let read = try await ledgerTreeHashes(rootPlan.nodes + proofPlan.nodes)
        do {
            return LedgerConsistencyRead(count: count, root: try rootPlan.hashes(read).first ?? MerkleHash.emptyRoot,
                                         hashes: try proofPlan.hashes(read),
                                         cosignatures: try await logCosignatures(size: newSize))
        } catch let error as MerkleTreeError {
            throw StorageError.ledgerTreeBroken("\(error)")
        }
    }

    private func treeHashes(_ plan: MerkleProofPlan) async throws -> [[UInt8]] {
        do {
            return try plan.hashes(try await ledgerTreeHashes(plan.nodes))
        } catch let error as MerkleTreeError {
            throw StorageError.ledgerTreeBroken("\(error)")
        }
    }

    /// None: appends run wherever the calling task runs.
    public var ledgerExecutor: (any TaskExecutor)? { nil }
}

extension LedgerStore where Self: LedgerLookupStore {
    /// One read after another (a store that can read them in one snapshot does).
    public func ledgerInclusionRead(signatureID: String, treeSize: @escaping @Sendable (LedgerEntry) -> Int64?) async throws
        -> LedgerInclusionRead? {
        guard let entry = try await ledgerEntry(signatureID: signatureID) else { return nil }
        guard let size = treeSize(entry), size > entry.seq - 1 else { return LedgerInclusionRead(entry: entry, proof: nil) }
        let hashes = try await ledgerInclusionProof(index: entry.seq - 1, size: size)
        return LedgerInclusionRead(entry: entry, proof: LedgerInclusionRead.Proof(
            treeSize: size, hashes: hashes, cosignatures: try await logCosignatures(size: size)))
    }
}

extension LedgerStore {
    /// The time as it is (a store that keeps it exactly, or that does not say).
    public func ledgerTime(_ date: Date) -> Date { date }
}
