import Foundation
import NIOConcurrencyHelpers
@testable import StepSignEngine
import StepSignCrypto
import StepSignFormat
import StepSignTestSupport
import Testing

/// The last checkpoint a daemon signed, kept outside the database (SPEC §5.5), and the one an
/// append's transaction signs before it commits: kept only when that commits, forgotten when it
/// fails, settled after a crash; the kept one only grows, one change at a time.
@Suite struct KeptCheckpointTests {
    let directory: TemporaryDirectory
    let kept: KeptCheckpoint
    let key: Ed25519PrivateKey

    init() throws {
        directory = try TemporaryDirectory("kept-checkpoint")
        kept = KeptCheckpoint(path: directory.path + "/log-checkpoint")
        key = try Ed25519PrivateKey(seed: [UInt8](repeating: 7, count: 32))
    }

    func signed(_ size: Int64) throws -> TransparencyLog.Signed {
        let checkpoint = try LogCheckpoint(origin: "example.org/log", size: size, rootHash: SHA256.hash(Array("\(size)".utf8)))
        var note = try SignedNote(text: checkpoint.text)
        try note.sign(name: "example.org/log", ed25519: key)
        return TransparencyLog.Signed(note: note, checkpoint: checkpoint)
    }

    func fileSize(_ path: String) throws -> Int64? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try LogCheckpoint(text: SignedNote(parsing: String(contentsOfFile: path, encoding: .utf8)).text).size
    }

    @Test("a checkpoint replaces the kept one only if that is still the one it was proven from")
    func replaceOnlyFromTheKeptOne() throws {
        defer { directory.remove() }
        #expect(try kept.current() == nil)
        #expect(try kept.replace(nil, with: signed(3)))
        #expect(try fileSize(kept.path) == 3)
        // Proven from "none" but 3 is kept now: refused, nothing written.
        #expect(try !kept.replace(nil, with: signed(5)))
        #expect(try kept.replace(signed(3), with: signed(5)))
        #expect(try fileSize(kept.path) == 5)
        // A new instance reads the file.
        #expect(try KeptCheckpoint(path: kept.path).current()?.checkpoint.size == 5)
    }

    @Test("a checkpoint pending in a transaction becomes the kept one after the commit; nothing replaces the kept one meanwhile")
    func pendingThenPromoted() throws {
        defer { directory.remove() }
        #expect(try kept.replace(nil, with: signed(2)))
        let pending = try kept.signPending { newest in
            #expect(newest?.checkpoint.size == 2)
            return try signed(4)
        }
        #expect(pending?.checkpoint.size == 4)
        #expect(try fileSize(kept.pendingPath) == 4 && fileSize(kept.path) == 2)
        #expect(try kept.newest()?.checkpoint.size == 4 && kept.current()?.checkpoint.size == 2)
        // Another checkpoint proven from the kept one while this one is pending is refused.
        #expect(try !kept.replace(signed(2), with: signed(3)))
        // A second checkpoint in the same transaction is proven from the pending one.
        _ = try kept.signPending { newest in
            #expect(newest?.checkpoint.size == 4)
            return try signed(6)
        }
        #expect(try kept.promote()?.checkpoint.size == 6)
        #expect(try fileSize(kept.path) == 6 && fileSize(kept.pendingPath) == nil)
        #expect(try kept.promote() == nil)
    }

    @Test("a failed transaction's checkpoint is forgotten: the kept one stays")
    func pendingDropped() throws {
        defer { directory.remove() }
        #expect(try kept.replace(nil, with: signed(2)))
        _ = try kept.signPending { _ in try signed(4) }
        kept.drop()
        #expect(try fileSize(kept.pendingPath) == nil && kept.newest()?.checkpoint.size == 2)
        #expect(try kept.replace(signed(2), with: signed(3)))
    }

    @Test("a checkpoint being proven waits for the pending one to be settled: promoted or dropped")
    func waitersResumeWhenSettled() async throws {
        defer { directory.remove() }
        // The waiters run on an executor that runs them only when told to: after each step,
        // whether a waiter has resumed is decided by what happened to the checkpoint, not by
        // how fast another thread was. Each waiter notes the kept checkpoint it finds when it resumes.
        let executor = SteppedTaskExecutor()
        let kept = self.kept
        let found = NIOLockedValueBox<[Int64?]>([])
        func waiter() -> Task<Void, Never> {
            Task(executorPreference: executor) {
                await kept.untilNothingPending()
                let size = (try? kept.current())?.checkpoint.size
                found.withLockedValue { $0.append(size) }
            }
        }

        _ = try kept.signPending { _ in try signed(4) }
        let waiters = [waiter(), waiter()]
        #expect(executor.runUntilIdle() == 2, "both waiters ran until they waited")
        #expect(found.withLockedValue { $0 }.isEmpty, "a waiter went on while a checkpoint was pending")
        // A second checkpoint in the same transaction settles nothing: they still wait.
        _ = try kept.signPending { _ in try signed(6) }
        executor.runUntilIdle()
        #expect(found.withLockedValue { $0 }.isEmpty, "a waiter went on while a checkpoint was pending")
        // The commit: the pending checkpoint is kept, and both go on, finding it kept.
        #expect(try kept.promote()?.checkpoint.size == 6)
        #expect(executor.runUntilIdle() == 2)
        try #require(found.withLockedValue { $0 } == [6, 6], "promote() resumed the waiters")
        for task in waiters { await task.value }

        // A failed transaction's checkpoint, dropped, lets its waiter go on too; the kept one stays.
        _ = try kept.signPending { _ in try signed(8) }
        let dropped = waiter()
        executor.runUntilIdle()
        #expect(found.withLockedValue { $0 } == [6, 6], "a waiter went on while a checkpoint was pending")
        kept.drop()
        executor.runUntilIdle()
        try #require(found.withLockedValue { $0 } == [6, 6, 6], "drop() resumed the waiter")
        await dropped.value

        // With none pending, a waiter goes on at once.
        let late = waiter()
        executor.runUntilIdle()
        #expect(found.withLockedValue { $0 } == [6, 6, 6, 6])
        await late.value
    }

    @Test("after a crash, a pending checkpoint whose transaction committed is kept; one whose did not is removed")
    func leftoversSettled() async throws {
        defer { directory.remove() }
        #expect(try kept.replace(nil, with: signed(2)))
        _ = try kept.signPending { _ in try signed(4) }
        // A new process: the pending file is on disk, not in memory.
        let restarted = KeptCheckpoint(path: kept.path)
        #expect(try await restarted.settleLeftover { _ in false } == nil)
        #expect(try fileSize(kept.pendingPath) == nil && restarted.current()?.checkpoint.size == 2)

        _ = try kept.signPending { _ in try signed(6) }
        let again = KeptCheckpoint(path: kept.path)
        let settled = try await again.settleLeftover { pending in pending.checkpoint.size == 6 }
        #expect(settled?.checkpoint.size == 6)
        #expect(try fileSize(kept.path) == 6 && again.current()?.checkpoint.size == 6)
    }
}
