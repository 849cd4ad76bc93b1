import Foundation
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

    @Test("the writer thread ends when idle and the next row starts a new one")
    func idleThreadEndsAndRestarts() async throws {
        let writer = LedgerWriter(store: store, idleSeconds: 0.05)
        _ = try await writer.append(row(1))
        for _ in 0..<100 where writer.threadsEnded == 0 {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(writer.threadsEnded == 1)
        #expect(try await writer.append(row(2)).seq == 2)
    }

    @Test("the writer thread carries its own name, for top -H and perf")
    func threadName() async throws {
        // Idle for an hour before it ends: under the parallel test run this task may wait
        // tens of seconds for a thread after its row commits, and the writer must still be
        // there to be seen.
        let writer = LedgerWriter(store: store, idleSeconds: 3600)
        _ = try await writer.append(row(1))
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
