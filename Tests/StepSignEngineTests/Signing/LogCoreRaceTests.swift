import Foundation
import Logging
import NIOConcurrencyHelpers
@testable import StepSignEngine
import StepSignFormat
import StepSignProtocol
import StepSignStorage
import Testing
import StepSignTestSupport

/// The log core's compare-and-swap loop (docs/architecture.md, "The log core") against a store
/// whose tail another writer moves before each of the first `losses` commits: the batch is
/// computed again after each lost race and commits in the end, as long as the races end within
/// ``LogCore/retryBudget``; its callers never see 14 for a race they would win a moment later.
@Suite("Log core: lost races")
final class LogCoreRaceTests: Sendable {
    let fixture: SQLiteLedgerFixture
    var store: SQLiteStore { fixture.store }

    init() throws {
        fixture = try SQLiteLedgerFixture("log-core-race")
    }

    func row(_ index: Int, user: String = "alice") -> LedgerAppend {
        SQLiteLedgerFixture.row(index, user: user)
    }

    @Test("a batch that loses 100 races in a row (more than the 64 tries it once had) still commits, after the other writer's rows")
    func manyLostRaces() async throws {
        let racing = RacingStore(store: store, losses: 100) { [self] n in row(10_000 + n, user: "other") }
        let writer = LedgerWriter(store: racing)
        let entry = try await writer.append(row(1))
        #expect(racing.lost == 100)
        #expect(entry.seq == 101)
        #expect(try await store.ledgerCount() == 101)
        let audit = try await store.auditLedger()
        #expect(audit.ok)
    }

    @Test("on a host so slow that the time budget is spent before the first try, a batch still has its 64 tries: it commits at the 64th, and only a 65th lost race gives up with 14")
    func triesBeyondTheBudget() async throws {
        let slow = RacingStore(store: store, losses: LogCore.minimumTries - 1) { [self] n in row(10_000 + n, user: "other") }
        let core = LogCore(store: slow, log: nil, logger: .init(label: "test"), every: { 0 }, retryBudget: .zero)
        let appended = try await core.append([row(1)])
        #expect(appended.tries == LogCore.minimumTries)
        #expect(appended.entries.first?.seq == Int64(LogCore.minimumTries))

        let endless = RacingStore(store: store, losses: LogCore.minimumTries) { [self] n in row(20_000 + n, user: "other") }
        let refused = LogCore(store: endless, log: nil, logger: .init(label: "test"), every: { 0 }, retryBudget: .zero)
        let before = try await store.ledgerCount()
        await #expect(throws: StepSignError.self) { _ = try await refused.append([row(2)]) }
        #expect(endless.lost == LogCore.minimumTries)
        // The other writer's rows are in; the refused batch's row is not.
        #expect(try await store.ledgerCount() == before + Int64(LogCore.minimumTries))
    }

    @Test("after two lost races a batch takes the log's turn before it reads the other writer's rows, its commits claim it, all with one claim, and its result says how many it took")
    func claimsTheTurn() async throws {
        let racing = RacingStore(store: store, losses: 4) { [self] n in row(10_000 + n, user: "other") }
        let core = LogCore(store: racing, log: nil, logger: .init(label: "test"), every: { 0 })
        let appended = try await core.append([row(1)])
        #expect(appended.tries == 5)
        // The turn is taken once, between the second lost race and the catch-up read; the
        // commit that lands gives it back (nothing more to give back after it).
        #expect(racing.errands == ["commit", "commit", "take", "commit+turn", "commit+turn", "commit+turn"])
        let claims = racing.claims
        #expect(claims.count == 5)
        #expect(claims[0] == nil && claims[1] == nil)
        #expect(claims[2] != nil && claims[2] == claims[3] && claims[3] == claims[4])
        // A batch that commits the first time claims nothing.
        let next = try await core.append([row(2)])
        #expect(next.tries == 1)
        #expect(racing.claims.count == 6 && racing.claims[5] == nil)
    }
}

/// A ``LedgerStore`` whose tail another writer moves (one row appended straight to the store)
/// just before each of the first `losses` commits, so that each of them answers `tailMoved`.
private final class RacingStore: LedgerStore, Sendable {
    let store: SQLiteStore
    let losses: Int
    let competitor: @Sendable (Int) -> LedgerAppend
    private let count = NIOLockedValueBox(0)
    private let claimsSeen = NIOLockedValueBox<[LedgerTurnClaim?]>([])
    private let errandsSeen = NIOLockedValueBox<[String]>([])

    init(store: SQLiteStore, losses: Int, competitor: @escaping @Sendable (Int) -> LedgerAppend) {
        self.store = store
        self.losses = losses
        self.competitor = competitor
    }

    var lost: Int { count.withLockedValue { min($0, losses) } }
    /// Each commit's claim on the log's turn, in order.
    var claims: [LedgerTurnClaim?] { claimsSeen.withLockedValue { $0 } }
    /// Every commit in order: "commit" (with "+turn" when it claims the log's turn), and the
    /// empty ones that only "take" or "give back" the turn.
    var errands: [String] { errandsSeen.withLockedValue { $0 } }

    func commitLedger(_ commit: LedgerCommit) async throws -> LedgerCommitOutcome {
        guard !commit.entries.isEmpty else {
            errandsSeen.withLockedValue { $0.append(commit.takesTurn ? "take" : "give back") }
            return try await store.commitLedger(commit)
        }
        errandsSeen.withLockedValue { $0.append(commit.claimTurn == nil ? "commit" : "commit+turn") }
        let n = count.withLockedValue { value in
            value += 1
            return value
        }
        claimsSeen.withLockedValue { $0.append(commit.claimTurn) }
        if n <= losses { _ = try await store.appendLedger([competitor(n)]) }
        return try await store.commitLedger(commit)
    }

    var ledgerExecutor: (any TaskExecutor)? { store.ledgerExecutor }
    func appendLogCheckpoint(_ checkpoint: LogCheckpointRecord) async throws { try await store.appendLogCheckpoint(checkpoint) }
    func logCheckpoints(afterSize: Int64, throughSize: Int64?) async throws -> [LogCheckpointRecord] {
        try await store.logCheckpoints(afterSize: afterSize, throughSize: throughSize)
    }
    func addLogCosignatures(_ cosignatures: [LogCosignatureRecord]) async throws { try await store.addLogCosignatures(cosignatures) }
    func logCosignatures(size: Int64) async throws -> [LogCosignatureRecord] { try await store.logCosignatures(size: size) }
    func ledgerHead() async throws -> LedgerHead { try await store.ledgerHead() }
    func ledgerCount() async throws -> Int64 { try await store.ledgerCount() }
    func ledgerEntries(afterSeq: Int64, limit: Int) async throws -> [LedgerEntry] {
        try await store.ledgerEntries(afterSeq: afterSeq, limit: limit)
    }
    func ledgerTreeHashes(_ nodes: [MerkleNode]) async throws -> [MerkleNode: [UInt8]] { try await store.ledgerTreeHashes(nodes) }
    func ledgerInclusionRead(signatureID: String, treeSize: @escaping @Sendable (LedgerEntry) -> Int64?) async throws
        -> LedgerInclusionRead? {
        try await store.ledgerInclusionRead(signatureID: signatureID, treeSize: treeSize)
    }
    func ledgerConsistencyRead(from oldSize: Int64, to newSize: Int64) async throws -> LedgerConsistencyRead {
        try await store.ledgerConsistencyRead(from: oldSize, to: newSize)
    }
}
