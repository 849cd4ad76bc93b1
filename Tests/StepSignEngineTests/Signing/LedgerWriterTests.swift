import Foundation
import NIOConcurrencyHelpers
@testable import StepSignEngine
import StepSignFormat
import StepSignStorage
import Testing
import StepSignTestSupport

/// The group-commit writer against a real SQLite store in a temp directory.
@Suite("Ledger writer")
final class LedgerWriterTests: Sendable {
    let fixture: SQLiteLedgerFixture
    var store: SQLiteStore { fixture.store }

    init() throws {
        fixture = try SQLiteLedgerFixture("ledger-writer")
    }

    func row(_ index: Int) -> LedgerAppend {
        SQLiteLedgerFixture.row(index)
    }

    @Test("rows appended at once are each committed once, numbered 1...n with no gaps")
    func concurrentRows() async throws {
        let writer = LedgerWriter(store: store)
        let seqs = try await withThrowingTaskGroup(of: Int64.self) { group in
            for index in 0..<200 {
                group.addTask { try await writer.append(self.row(index)).seq }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(seqs.sorted() == Array(1...200))
        #expect(try await store.auditLedger() == LedgerAudit(ok: true, entries: 200, firstBadSeq: nil))
    }

    @Test("a row is readable from the store when its append returns")
    func durableBeforeReturn() async throws {
        let writer = LedgerWriter(store: store)
        let entry = try await writer.append(row(1))
        #expect(try await store.ledgerEntry(signatureID: entry.signatureID) == entry)
    }

    @Test("the drain task ends when the queue is empty, and the next row starts another")
    func drainEndsAndRestarts() async throws {
        let writer = LedgerWriter(store: store)
        #expect(try await writer.append(row(1)).seq == 1)
        // Sequential rows: each finds the queue empty again (a drain that never ended, or two
        // at once, would show as a hang or a gap).
        for index in 2...50 {
            #expect(try await writer.append(row(index)).seq == Int64(index))
        }
    }

    @Test("SQLite's commit blocks on the store's own ledger thread, never on the cooperative pool")
    func commitRunsOnTheLedgerThread() async throws {
        let writer = LedgerWriter(store: store)
        #expect(try await writer.append(all: [row(1), row(2)]).map(\.seq) == [1, 2])
        // The store's ledger executor (where its commit runs and the writer's drain prefers) is that thread.
        let thread = await Task(executorPreference: store.ledgerExecutor) { currentThreadName() }.value
        #expect(thread == "stepsign-ledger")
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
        let names = tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
        #expect(names.contains("stepsign-ledger\n"))
    }

    @Test("a batch the store refuses fails its callers, and later rows still commit")
    func failedBatch() async throws {
        let writer = LedgerWriter(store: store)
        _ = try await writer.append(row(1))
        await #expect(throws: StorageError.duplicateSignatureID(row(1).signatureID)) {
            try await writer.append(row(1))
        }
        #expect(try await writer.append(row(2)).seq == 2)
    }

    @Test("groups (a batch's rows) racing single rows are each committed whole, consecutive, in order")
    func groupsAreNeverSplit() async throws {
        let writer = LedgerWriter(store: store)
        // 40 groups of 1 to 300 rows (about 6,000 in all, so they span many transactions) and
        // 200 single rows, all at once.
        let sizes = (0..<40).map { ($0 * 37) % 300 + 1 }
        let starts = sizes.reduce(into: [0]) { $0.append($0.last! + $1) }
        let results = try await withThrowingTaskGroup(of: ([Int64], [String]).self) { group in
            for (index, size) in sizes.enumerated() {
                let rows = (starts[index]..<starts[index] + size).map { self.row($0) }
                group.addTask { (try await writer.append(all: rows).map(\.seq), rows.map(\.signatureID)) }
            }
            for index in 0..<200 {
                let single = self.row(100_000 + index)
                group.addTask { ([try await writer.append(single).seq], [single.signatureID]) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for (seqs, ids) in results {
            #expect(seqs.count == ids.count && seqs == Array(seqs[0]..<seqs[0] + Int64(seqs.count)), "a group was split")
            for (seq, id) in zip(seqs, ids) {
                #expect(try await store.ledgerEntry(signatureID: id)?.seq == seq)
            }
        }
        let total = starts.last! + 200
        #expect(results.flatMap(\.0).sorted() == Array(1...Int64(total)))
        #expect(try await store.auditLedger() == LedgerAudit(ok: true, entries: total, firstBadSeq: nil))
    }

    @Test("a group larger than one transaction's share is committed alone, whole")
    func oversizedGroup() async throws {
        let writer = LedgerWriter(store: store)
        let seqs = try await writer.append(all: (0..<2500).map { row($0) }).map(\.seq)
        #expect(seqs == Array(1...2500))
    }

    @Test("a group with a row the store refuses fails whole: none of its rows is in the ledger")
    func groupFailsWhole() async throws {
        let writer = LedgerWriter(store: store)
        _ = try await writer.append(row(1))
        await #expect(throws: StorageError.duplicateSignatureID(row(1).signatureID)) {
            try await writer.append(all: [self.row(2), self.row(1), self.row(3)])
        }
        #expect(try await store.ledgerCount() == 1)
        #expect(try await store.ledgerEntry(signatureID: row(2).signatureID) == nil)
        #expect(try await writer.append(all: [row(2), row(3)]).map(\.seq) == [2, 3])
    }
}

/// The calling thread's name as the kernel has it.
private func currentThreadName() -> String {
    let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
    return comm.hasSuffix("\n") ? String(comm.dropLast()) : comm
}
