import Foundation
import StepSignFormat
import Testing
@testable import StepSignStorage

/// The store's side of the log core (SPEC §5.5; docs/architecture.md "The log core"): a batch
/// computed on a tail is committed only while the log's tail is still that one. A store given a
/// stale one changes nothing and answers `tailMoved` with the log's real tail.
@Suite struct LedgerCompareAndSwapTests {
    /// Everything a commit may change, read back.
    struct Snapshot: Equatable {
        var entries: [LedgerEntry]
        var nodes: [MerkleNode: [UInt8]]
        var notes: [LogCheckpointRecord]
    }

    static func snapshot(_ store: any StepSignStore) async throws -> Snapshot {
        let count = try await store.ledgerCount()
        var nodes: [MerkleNode] = []
        for level in 0..<6 {
            for index in 0..<((count + 8) >> level) { nodes.append(MerkleNode(level: level, index: index)) }
        }
        return Snapshot(entries: try await store.ledgerEntries(afterSeq: 0, limit: 1000),
                        nodes: try await store.ledgerTreeHashes(nodes),
                        notes: try await store.logCheckpoints(afterSize: 0, throughSize: nil))
    }

    /// A batch of `items` with a checkpoint at size 6, computed on `head` and `tree`.
    static func commit(_ items: [LedgerAppend], after head: LedgerHead, tree: MerkleFrontier, epochs: Int? = nil) -> LedgerCommit {
        var commit = LedgerCommit(items: items, after: head, tree: tree, createdAt: epoch, rootsAt: { $0 == 6 })
        commit.checkpoints = commit.roots.map { LogCheckpointRecord(size: $0.key, instance: "test", note: "note \($0.key)\n",
                                                                    createdAt: epoch) }
        commit.expectedEpochs = epochs
        return commit
    }

    @Test("a commit computed on a tail another writer moved changes nothing and answers tailMoved with the real tail",
          arguments: StoreBackend.allCases)
    func staleTail(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            _ = try await store.appendLedger(ledgerBatch(1..<3))
            let head = try await store.ledgerHead()
            let tree = try await store.ledgerFrontier(size: head.seq)
            // Another writer (a second daemon) appends first.
            _ = try await store.appendLedger(ledgerBatch(3..<5))
            let moved = try await store.ledgerHead()
            let before = try await Self.snapshot(store)

            let stale = Self.commit(ledgerBatch(10..<13), after: head, tree: tree)
            #expect(try await store.commitLedger(stale) == .tailMoved(moved, epochs: 0))
            #expect(try await Self.snapshot(store) == before, "a stale commit stored nothing")

            // The same size with another hash (a rewritten tail) is no match either.
            let rechained = Self.commit(ledgerBatch(10..<13), after: LedgerHead(seq: moved.seq, entryHash: head.entryHash),
                                        tree: try await store.ledgerFrontier(size: moved.seq))
            #expect(try await store.commitLedger(rechained) == .tailMoved(moved, epochs: 0))
            // A tail the log never reached (it was cut behind the writer's back).
            let ahead = Self.commit(ledgerBatch(10..<13), after: LedgerHead(seq: 0, entryHash: LedgerChain.genesisHash),
                                    tree: MerkleFrontier())
            #expect(try await store.commitLedger(ahead) == .tailMoved(moved, epochs: 0))
            // The right tail but another number of log epochs (the checkpoints' origin depends on them).
            let epochs = Self.commit(ledgerBatch(10..<13), after: moved, tree: try await store.ledgerFrontier(size: moved.seq),
                                     epochs: 1)
            #expect(try await store.commitLedger(epochs) == .tailMoved(moved, epochs: 0))
            #expect(try await Self.snapshot(store) == before, "no refused commit stored anything")

            // Computed again on the real tail, it commits: rows, nodes and its checkpoint.
            let fresh = Self.commit(ledgerBatch(10..<13), after: moved, tree: try await store.ledgerFrontier(size: moved.seq),
                                    epochs: 0)
            guard case .committed(let entries) = try await store.commitLedger(fresh) else {
                Issue.record("a commit on the real tail was refused")
                return
            }
            #expect(entries.map(\.seq) == [5, 6, 7])
            #expect(entries.map(\.entryHash) == fresh.entries.map(\.entryHash))
            for entry in entries { #expect(try await store.ledgerEntry(signatureID: entry.signatureID) == entry) }
            let after = try await Self.snapshot(store)
            #expect(after.notes.map(\.size) == [6])
            for (node, hash) in fresh.nodes { #expect(after.nodes[node] == hash) }
            #expect(try await store.ledgerRoot(size: 7) == fresh.tree.root)
            #expect(try await store.auditLedger() == LedgerAudit(ok: true, entries: 7, firstBadSeq: nil))
        }
    }

    @Test("two writers racing on one tail: one commits, the other is told the new tail and commits after it",
          arguments: StoreBackend.allCases)
    func racingWriters(_ backend: StoreBackend) async throws {
        try await withStores(backend, count: 2) { stores in
            let head = try await stores[0].ledgerHead()
            let first = Self.commit(ledgerBatch(1..<3), after: head, tree: MerkleFrontier())
            let second = Self.commit(ledgerBatch(3..<6), after: head, tree: MerkleFrontier())
            async let a = stores[0].commitLedger(first)
            async let b = stores[1].commitLedger(second)
            let outcomes = try await [a, b]
            let committed = outcomes.filter { if case .committed = $0 { true } else { false } }
            #expect(committed.count == 1, "\(outcomes)")
            let tail = try await stores[0].ledgerHead()
            #expect(outcomes.contains(.tailMoved(tail, epochs: 0)), "\(outcomes)")
            // The loser computes again on the tail it was told, and commits.
            let loser = if case .committed = outcomes[0] { ledgerBatch(3..<6) } else { ledgerBatch(1..<3) }
            let again = LedgerCommit(items: loser, after: tail, tree: try await stores[1].ledgerFrontier(size: tail.seq), createdAt: epoch)
            guard case .committed = try await stores[1].commitLedger(again) else {
                Issue.record("the loser's second commit was refused")
                return
            }
            #expect(try await stores[0].auditLedger() == LedgerAudit(ok: true, entries: 5, firstBadSeq: nil))
        }
    }
}
