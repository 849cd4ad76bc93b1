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
    let directory = TemporaryDirectory.path("ledger-writer")
    let store: SQLiteStore

    init() throws {
        store = try SQLiteStore.open(stateDirectory: directory, seal: try SealKey.stateKey(stateDirectory: directory).seal, sealUnsealed: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func row(_ index: Int) -> LedgerAppend {
        LedgerAppend(signatureID: String(format: "0190a0b0-0000-7000-8000-%012d", index), user: "alice",
                     iat: 1_750_000_000, kid: "kid-1", jws: "header.claims\(index).sig",
                     peer: LedgerPeer(uid: 1000, pid: 42, comm: "tester"), authLevel: 0)
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
        let threads = NIOLockedValueBox<[String]>([])
        _ = try await store.appendLedger([row(1), row(2)], checkpointEvery: 1) { seq, hash in
            threads.withLockedValue { $0.append(currentThreadName()) }
            return LedgerCheckpointRecord(seq: seq, entryHash: hash, kid: "kid-1", jws: "cp", createdAt: Date())
        }
        #expect(threads.withLockedValue { $0 } == ["stepsign-ledger", "stepsign-ledger"])
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
}

/// The calling thread's name as the kernel has it.
private func currentThreadName() -> String {
    let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
    return comm.hasSuffix("\n") ? String(comm.dropLast()) : comm
}
