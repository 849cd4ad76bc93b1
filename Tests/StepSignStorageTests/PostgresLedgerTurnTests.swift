import Foundation
import NIOConcurrencyHelpers
import StepSignFormat
import StepSignPostgres
import StepSignStorage
import Testing

/// The log's turn (schema v18; docs/decisions.md, "One log core"): two daemons' stores on one
/// PostgreSQL, one committing in a tight loop. A batch that lost the race for the tail twice
/// claims the turn: no other batch commits until it has, so it commits within a few tries
/// instead of losing again and again to the daemon that just won. A claimant that walks away
/// holds the log no longer than the safety timeout, or not at all when it gives the turn back.
@Suite("The log's turn between two daemons on one PostgreSQL", .enabled(if: PostgresTestServer.enabled))
struct PostgresLedgerTurnTests {
    /// The trees the writers made, by size: what a daemon's log core knows from entries.
    final class Trees: Sendable {
        private let trees = NIOLockedValueBox<[Int64: MerkleFrontier]>([0: MerkleFrontier()])
        func at(_ size: Int64) -> MerkleFrontier? { trees.withLockedValue { $0[size] } }
        func add(_ tree: MerkleFrontier) { trees.withLockedValue { $0[tree.size] = tree } }
    }

    /// Appends `items` as the log core does: computed on the tail, committed if it is still
    /// the tail, else computed again; after two lost races the batch takes the turn, then reads
    /// the tail, and its commits claim the turn. Returns the number of commits it took.
    static func append(_ items: [LedgerAppend], to store: PostgresStore, trees: Trees) async throws -> Int {
        let claim = LedgerTurnClaim()
        var tries = 0
        var lost = 0
        var claimed = false
        while true {
            let head = try await store.ledgerHead()
            // The other writer's tree is recorded just after its commit answered.
            guard let tree = trees.at(head.seq) else {
                await Task.yield()
                continue
            }
            tries += 1
            var commit = LedgerCommit(items: items, after: head, tree: tree, createdAt: Date())
            if claimed { commit.claimTurn = claim }
            switch try await store.commitLedger(commit) {
            case .committed:
                trees.add(commit.tree)
                return tries
            case .tailMoved:
                lost += 1
                if lost == 2 {
                    _ = try await store.commitLedger(.takingTurn(claim))
                    claimed = true
                }
            }
        }
    }

    @Test("under a steady load of another daemon, every batch commits within a few tries")
    func fairRace() async throws {
        try await withPostgresDatabase { database in
            let busy = try await database.open(poolSize: 4)
            let other = try await database.open(poolSize: 2)
            let trees = Trees()
            let stop = NIOLockedValueBox(false)
            let tries: [Int] = try await withThrowingTaskGroup(of: [Int].self) { group in
                // The busy daemon: three batches in flight at all times.
                for loop in 0..<3 {
                    group.addTask {
                        var index = 100_000 * (loop + 1)
                        while !stop.withLockedValue({ $0 }) {
                            index += 1
                            _ = try await Self.append([ledgerAppend(index, user: "busy")], to: busy, trees: trees)
                        }
                        return []
                    }
                }
                group.addTask {
                    defer { stop.withLockedValue { $0 = true } }
                    var tries: [Int] = []
                    for index in 1...40 {
                        tries.append(try await Self.append([ledgerAppend(index)], to: other, trees: trees))
                    }
                    return tries
                }
                var all: [Int] = []
                for try await some in group { all += some }
                return all
            }
            try await busy.close()
            try await other.close()
            #expect(tries.count == 40)
            // Two lost races, the turn taken, the tail read under it, then the commit: nothing
            // else commits between the read and the commit.
            #expect(tries.max() ?? 0 <= 3, "tries per batch: \(tries)")
        }
    }

    @Test("a turn taken before the read holds every other daemon's commit until the claimant's batch lands on the tail it read")
    func turnTakenBeforeTheRead() async throws {
        try await withPostgresDatabase { database in
            let claimant = try await database.open()
            let other = try await database.open()
            let claim = LedgerTurnClaim()
            _ = try await claimant.commitLedger(.takingTurn(claim))
            // The other daemon's batch, computed on the empty log, waits for the turn.
            let head = try await claimant.ledgerHead()
            let waiting = Task {
                try await other.commitLedger(LedgerCommit(items: [ledgerAppend(2)], after: head, tree: MerkleFrontier(),
                                                          createdAt: Date()))
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await claimant.ledgerCount() == 0, "another daemon committed while the turn was held")
            var mine = LedgerCommit(items: [ledgerAppend(1)], after: head, tree: MerkleFrontier(), createdAt: Date())
            mine.claimTurn = claim
            guard case .committed = try await claimant.commitLedger(mine) else {
                Issue.record("the claimant's batch, read under its turn, did not commit")
                return
            }
            // Given back with that commit: the waiting batch is answered (its tail has moved).
            guard case .tailMoved(let tail, _) = try await waiting.value else {
                Issue.record("the waiting batch committed on a tail that had moved")
                return
            }
            #expect(tail.seq == 1)
            try await claimant.close()
            try await other.close()
        }
    }

    @Test("a claimant that walks away after a lost race holds the log no longer than the safety timeout")
    func abandonedTurn() async throws {
        try await withPostgresDatabase { database in
            let claimant = try await database.open()
            let other = try await database.open()
            let first = LedgerCommit(items: [ledgerAppend(1)], after: try await other.ledgerHead(), tree: MerkleFrontier(),
                                     createdAt: Date())
            #expect(try await other.commitLedger(first) != .tailMoved(try await other.ledgerHead(), epochs: 0))
            // Computed on the empty log, claiming the turn: it loses, keeps the turn, never comes back.
            var stale = LedgerCommit(items: [ledgerAppend(2)], after: LedgerHead(seq: 0, entryHash: [UInt8](repeating: 0, count: 32)),
                                     tree: MerkleFrontier(), createdAt: Date())
            stale.claimTurn = LedgerTurnClaim()
            guard case .tailMoved = try await claimant.commitLedger(stale) else {
                Issue.record("a stale batch committed")
                return
            }
            let clock = ContinuousClock()
            let start = clock.now
            let next = LedgerCommit(items: [ledgerAppend(3)], after: try await other.ledgerHead(), tree: first.tree, createdAt: Date())
            guard case .committed = try await other.commitLedger(next) else {
                Issue.record("the other daemon's batch did not commit")
                return
            }
            let waited = clock.now - start
            // It waited for the turn (held), but not much past the safety timeout.
            #expect(waited >= .milliseconds(1500), "waited \(waited)")
            #expect(waited < .seconds(4), "waited \(waited)")
            try await claimant.close()
            try await other.close()
        }
    }

    @Test("a claimant that gives up gives the turn back at once (an empty commit with its claim)")
    func givenBackTurn() async throws {
        try await withPostgresDatabase { database in
            let claimant = try await database.open()
            let other = try await database.open()
            let first = LedgerCommit(items: [ledgerAppend(1)], after: try await other.ledgerHead(), tree: MerkleFrontier(),
                                     createdAt: Date())
            _ = try await other.commitLedger(first)
            let claim = LedgerTurnClaim()
            let empty = LedgerHead(seq: 0, entryHash: [UInt8](repeating: 0, count: 32))
            var stale = LedgerCommit(items: [ledgerAppend(2)], after: empty, tree: MerkleFrontier(), createdAt: Date())
            stale.claimTurn = claim
            guard case .tailMoved = try await claimant.commitLedger(stale) else {
                Issue.record("a stale batch committed")
                return
            }
            _ = try await claimant.commitLedger(.givingBackTurn(claim))
            let clock = ContinuousClock()
            let start = clock.now
            let next = LedgerCommit(items: [ledgerAppend(3)], after: try await other.ledgerHead(), tree: first.tree, createdAt: Date())
            guard case .committed = try await other.commitLedger(next) else {
                Issue.record("the other daemon's batch did not commit")
                return
            }
            let waited = clock.now - start
            #expect(waited < .seconds(1), "waited \(waited)")
            try await claimant.close()
            try await other.close()
        }
    }
}
