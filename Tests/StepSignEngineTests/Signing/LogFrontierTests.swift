import Foundation
@testable import StepSignEngine
import StepSignFormat
import StepSignStorage
import Testing
import StepSignTestSupport

/// The frontier after a committed batch (SPEC §5.5, "roots from entries"): it takes the batch's
/// own chain head and tree only when what the store gave back is exactly the batch it was
/// computed as, on the tail it was computed on; anything else is checked and hashed entry by
/// entry, and an entry whose stored hash is not its JWS's stops the log.
@Suite("Log frontier: the tail after a batch")
final class LogFrontierTests: Sendable {
    let fixture: SQLiteLedgerFixture
    var store: SQLiteStore { fixture.store }

    init() throws {
        fixture = try SQLiteLedgerFixture("log-frontier")
    }

    func row(_ index: Int) -> LedgerAppend {
        SQLiteLedgerFixture.row(index)
    }

    /// A batch of `rows` computed on `tail`, as the log core computes it.
    func batch(_ rows: [LedgerAppend], on tail: LogFrontier.Tail) -> LedgerCommit {
        LedgerCommit(items: rows, after: LedgerHead(seq: tail.size, entryHash: tail.chainHash), tree: tail.tree, createdAt: Date())
    }

    func committed(_ commit: LedgerCommit) async throws -> [LedgerEntry] {
        guard case let .committed(entries) = try await store.commitLedger(commit) else {
            Issue.record("the batch did not commit")
            return []
        }
        return entries
    }

    @Test("after batches of 1 to 13 rows, the frontier is the tail a daemon starting now computes from the stored entries")
    func tailIsTheOneTheEntriesGive() async throws {
        let frontier = LogFrontier(store: store)
        var next = 1
        for count in [1, 2, 3, 5, 8, 13, 1, 7] {
            let prepared = try await frontier.ready(kept: nil, head: nil)
            let rows = (next..<next + count).map(row)
            next += count
            let commit = batch(rows, on: prepared)
            try await frontier.advance(prepared: prepared, past: try await committed(commit), batch: commit, kept: nil, head: nil)
        }
        let fromEntries = try await LogFrontier(store: store).ready(kept: nil, head: nil)
        #expect(frontier.current == fromEntries)
        #expect(fromEntries.size == Int64(next - 1))
    }

    @Test("a store that gives back a row whose JWS is not the one the batch hashed is not believed: the entry is hashed, and its stored hash refuses it")
    func otherRowsAreCheckedAndHashed() async throws {
        let frontier = LogFrontier(store: store)
        let prepared = try await frontier.ready(kept: nil, head: nil)
        let commit = batch((1...4).map(row), on: prepared)
        var entries = try await committed(commit)
        entries[2].jws = "header.forged.sig"
        await #expect(throws: LogFrontier.Disagreement.self) {
            try await frontier.advance(prepared: prepared, past: entries, batch: commit, kept: nil, head: nil)
        }
        #expect(frontier.current == prepared)
    }

    @Test("the batch's tail is taken only for exactly its entries", arguments: ["seq", "prevHash", "entryHash", "signatureID", "jws", "count"])
    func onlyTheBatchsOwnEntries(field: String) async throws {
        let prepared = try await LogFrontier(store: store).ready(kept: nil, head: nil)
        let commit = batch((1...3).map(row), on: prepared)
        #expect(LogFrontier.tail(after: commit, on: prepared, stored: commit.entries)?.tree == commit.tree)
        var entries = commit.entries
        switch field {
        case "seq": entries[1].seq += 1
        case "prevHash": entries[1].prevHash[0] ^= 1
        case "entryHash": entries[1].entryHash[0] ^= 1
        case "signatureID": entries[1].signatureID = row(9).signatureID
        case "jws": entries[1].jws += "x"
        default: entries.removeLast()
        }
        #expect(LogFrontier.tail(after: commit, on: prepared, stored: entries) == nil)
    }

    @Test("a batch computed on another tail than the one given is not taken")
    func anotherTail() async throws {
        let frontier = LogFrontier(store: store)
        let empty = try await frontier.ready(kept: nil, head: nil)
        let first = batch([row(1)], on: empty)
        try await frontier.advance(prepared: empty, past: try await committed(first), batch: first, kept: nil, head: nil)
        let second = batch([row(2)], on: empty)
        let after = try #require(frontier.current)
        #expect(LogFrontier.tail(after: second, on: after, stored: second.entries) == nil)
    }
}
