import Foundation
import StepSignFormat

/// A batch of the log made whole before any transaction (SPEC §5, §5.5): its rows numbered and
/// chained, the tree nodes its leaves complete and the checkpoint notes of the sizes it
/// reaches, all computed by the log core on the tail it expects. A store only checks that the
/// log's tail is still ``expected`` (and, when ``expectedEpochs`` is set, that the log has that
/// many epochs), inserts what it is given and commits (``LedgerStore/commitLedger(_:)``); it
/// numbers, chains and hashes nothing.
public struct LedgerCommit: Sendable {
    /// The log's tail the batch was computed on: its last entry's seq and hash.
    public let expected: LedgerHead
    /// The number of log epochs the checkpoints' origin was chosen by; nil: not checked (a
    /// batch without checkpoints).
    public var expectedEpochs: Int?
    /// The rows as the callers gave them (an event's approval ID is bound from here).
    public let items: [LedgerAppend]
    /// The rows as they will be stored, in batch order: seq from `expected.seq + 1` on, each
    /// chained onto the one before.
    public let entries: [LedgerEntry]
    /// The batch's leaves and the subtrees they complete, in append order, which is their
    /// storage order (a store that reads leaves from their entries, as SQLite does, skips level 0).
    public let nodes: [(node: MerkleNode, hash: [UInt8])]
    /// The log's checkpoints to store with the batch (SPEC §5.3: those at a multiple of
    /// `checkpoint_entries` commit with the entry that reaches it).
    public var checkpoints: [LogCheckpointRecord]
    /// The tree after the batch.
    public let tree: MerkleFrontier
    /// The root of the tree at each size of the batch that `rootsAt` asked for.
    public let roots: [Int64: [UInt8]]
    /// When the rows were made (each store keeps it at its own precision).
    public let createdAt: Date
    /// Set by the log core on a batch that lost the race for the tail twice in a row: the
    /// commit claims the log's turn for this batch, so that it waits behind at most one batch
    /// of another daemon. A store shared by several daemons (PostgreSQL) holds the turn from
    /// this commit until one with the same claim commits or fails (or a safety timeout); a
    /// store of one daemon (SQLite) ignores it. An empty commit with a claim takes the turn
    /// (``takingTurn(_:)``) or gives back a turn still held (``givingBackTurn(_:)``).
    /// docs/decisions.md, "One log core".
    public var claimTurn: LedgerTurnClaim?
    /// An empty commit's errand: true takes the turn for ``claimTurn`` and keeps it for the
    /// batch's next commit, false gives it back.
    public private(set) var takesTurn = false

    /// An empty commit that takes the log's turn for `claim` before the batch reads the entries
    /// that came first and is computed again: nothing else commits meanwhile, so the commit
    /// after it finds the tail it expects.
    public static func takingTurn(_ claim: LedgerTurnClaim) -> LedgerCommit {
        var commit = LedgerCommit.empty
        commit.claimTurn = claim
        commit.takesTurn = true
        return commit
    }

    /// An empty commit that gives back the turn held for `claim`, if any.
    public static func givingBackTurn(_ claim: LedgerTurnClaim) -> LedgerCommit {
        var commit = LedgerCommit.empty
        commit.claimTurn = claim
        return commit
    }

    private static var empty: LedgerCommit {
        LedgerCommit(items: [], after: LedgerHead(seq: 0, entryHash: [UInt8](repeating: 0, count: 32)),
                     tree: MerkleFrontier(), createdAt: Date(timeIntervalSince1970: 0))
    }

    /// The batch `items` after the tail `expected`, whose tree is `tree` (of `expected.seq`
    /// leaves): sequence numbers, hash chain (SPEC §5: entry hash = SHA-256(previous ‖
    /// SHA-256(JWS))), leaves and nodes (SPEC §5.5), and the roots at the sizes `rootsAt` wants.
    public init(items: [LedgerAppend], after expected: LedgerHead, tree start: MerkleFrontier, createdAt: Date,
                rootsAt wanted: (Int64) -> Bool = { _ in false }) {
        precondition(start.size == expected.seq, "the tree and the chain of a batch's tail have one size")
        var seq = expected.seq
        var hash = expected.entryHash
        var tree = start
        var entries: [LedgerEntry] = []
        var nodes: [(node: MerkleNode, hash: [UInt8])] = []
        var roots: [Int64: [UInt8]] = [:]
        entries.reserveCapacity(items.count)
        for item in items {
            seq += 1
            let entryHash = LedgerChain.entryHash(previous: hash, jwsDigest: item.jwsDigest)
            entries.append(LedgerEntry(
                seq: seq, signatureID: item.signatureID, user: item.user, iat: item.iat, kid: item.kid, jws: item.jws,
                peer: item.peer, authLevel: item.authLevel, prevHash: hash, entryHash: entryHash, createdAt: createdAt))
            hash = entryHash
            for (node, nodeHash) in tree.append(leafHash: item.leafHash) {
                nodes.append((node, nodeHash))
            }
            if wanted(seq) { roots[seq] = tree.root }
        }
        self.expected = expected
        self.expectedEpochs = nil
        self.items = items
        self.entries = entries
        self.nodes = nodes
        self.checkpoints = []
        self.claimTurn = nil
        self.tree = tree
        self.roots = roots
        self.createdAt = createdAt
    }

    /// ``entries`` with the time as the store keeps it (`createdAt`, rounded by the store).
    package func entries(createdAt: Date) -> [LedgerEntry] {
        // Made at a time the store keeps as it is (``LedgerStore/ledgerTime(_:)``): no copies.
        if createdAt == self.createdAt { return entries }
        return entries.map { entry in
            var entry = entry
            entry.createdAt = createdAt
            return entry
        }
    }
}

/// One batch's claim on the log's turn (``LedgerCommit/claimTurn``): the commits of one batch
/// carry the same claim, so that a store can give the turn it holds for it to the next one.
public struct LedgerTurnClaim: Sendable, Hashable {
    let id: UInt64

    /// A claim of its own, unlike any other.
    public init() {
        id = UInt64.random(in: .min ... .max)
    }
}

/// What a store answers to ``LedgerStore/commitLedger(_:)``.
public enum LedgerCommitOutcome: Sendable, Equatable {
    /// Committed, durably: the entries as stored.
    case committed([LedgerEntry])
    /// Nothing was stored: the log's tail (or its number of epochs, when checked) is no longer
    /// the one the batch was computed on. `tail` and `epochs` are the log's now; the core reads
    /// what came after its own tail and computes the batch again.
    case tailMoved(LedgerHead, epochs: Int)
}
