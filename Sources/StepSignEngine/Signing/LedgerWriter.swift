import NIOConcurrencyHelpers
import StepSignStorage
import class Foundation.Thread

/// Appends signatures to the ledger with group commit, on a thread of its own.
///
/// Callers queue their row and wait; the writer thread takes every queued row (up to
/// `maxBatch`), commits them in one durable transaction and resumes each caller with its
/// entry. While one transaction commits, new rows queue up for the next, so throughput does
/// not collapse to one `fsync` per signature, and a row is acknowledged only after the
/// transaction that holds it is durable (SPEC §5).
///
/// Why a thread and not an actor: the commit blocks (SQLite, `fdatasync`), and an actor would
/// add two thread hops per row (to the actor and back) plus one per batch to the store's own
/// queue. Here a caller takes a lock once and is resumed once, on its own executor.
/// The thread starts with the first row and ends after `idleSeconds` without rows, so an
/// engine needs no explicit shutdown.
final class LedgerWriter: @unchecked Sendable {
    private typealias Waiter = CheckedContinuation<LedgerEntry, any Error>

    private let store: any StepSignStore
    /// The most rows one transaction takes, so one commit never holds callers too long.
    private let maxBatch = 1024
    /// How long the thread waits for rows before it ends.
    private let idleSeconds: Double

    /// Guards the three properties below; its value is "`queue` is not empty".
    private let condition = ConditionLock(value: false)
    private var queue: [(LedgerAppend, Waiter)] = []
    private var threadRunning = false
    private var idleThreadsEnded = 0

    /// How many writer threads have ended after being idle (for tests).
    var threadsEnded: Int {
        condition.lock()
        defer { condition.unlock() }
        return idleThreadsEnded
    }

    /// Makes the checkpoints (SPEC §5.3); nil makes none.
    private let checkpointer: LedgerCheckpointer?

    init(store: any StepSignStore, idleSeconds: Double = 2, checkpointer: LedgerCheckpointer? = nil) {
        self.store = store
        self.idleSeconds = idleSeconds
        self.checkpointer = checkpointer
    }

    /// Appends `entry` and returns it as stored (with its sequence number and hashes).
    func append(_ entry: LedgerAppend) async throws -> LedgerEntry {
        try await withCheckedThrowingContinuation { (waiter: Waiter) in
            condition.lock()
            queue.append((entry, waiter))
            let startThread = !threadRunning
            threadRunning = true
            condition.unlock(withValue: true)
            if startThread {
                Thread { self.run() }.start()
            }
        }
    }

    /// The writer thread: commits batches until no row comes for `idleSeconds`.
    private func run() {
        // Named from inside: on Linux, a name set before `start()` never reaches the kernel,
        // and the thread would show in `top -H` and perf as the event loop that started it.
        Thread.current.name = "stepsign-ledger"
        while let batch = nextBatch() {
            commit(batch)
        }
    }

    /// Waits for rows and takes up to `maxBatch` of them; nil ends the thread.
    ///
    /// While committed entries wait for a timed checkpoint (`ledger.checkpoint_seconds`), the
    /// thread stays to make it when it is due, even without rows.
    private func nextBatch() -> [(LedgerAppend, Waiter)]? {
        while true {
            let due = checkpointer?.secondsUntilDue()
            if let due, due <= 0 {
                checkpointer?.checkpointHeadIfNeeded(reason: "seconds")
                continue
            }
            if condition.lock(whenValue: true, timeoutSeconds: min(idleSeconds, due ?? idleSeconds)) { break }
            // Timed out; a row may have come in between, so decide under the lock.
            condition.lock()
            if !queue.isEmpty { break }
            if due != nil {
                condition.unlock()
                continue
            }
            threadRunning = false
            idleThreadsEnded += 1
            condition.unlock()
            return nil
        }
        let count = min(queue.count, maxBatch)
        let batch = Array(queue.prefix(count))
        queue.removeFirst(count)
        condition.unlock(withValue: !queue.isEmpty)
        return batch
    }

    private func commit(_ batch: [(LedgerAppend, Waiter)]) {
        do {
            // Checkpoints at multiples of `checkpoint_entries` are signed here, on this thread,
            // and stored in the batch's transaction: one signature per that many entries.
            var made: [LedgerCheckpointRecord] = []
            let stored = try store.appendLedger(batch.map(\.0), checkpointEvery: checkpointer?.entries ?? 0) { seq, hash in
                guard let checkpointer else { throw LedgerWriterError.shortBatch }
                let record = try checkpointer.sign(seq: seq, entryHash: hash)
                made.append(record)
                return record
            }
            guard stored.count == batch.count else { throw LedgerWriterError.shortBatch }
            for ((_, waiter), entry) in zip(batch, stored) {
                waiter.resume(returning: entry)
            }
            if let checkpointer, let last = stored.last {
                checkpointer.didCommit(last: last, made: made)
            }
        } catch {
            for (_, waiter) in batch {
                waiter.resume(throwing: error)
            }
        }
    }
}

/// The store returned a different number of rows than it was given.
enum LedgerWriterError: Error {
    case shortBatch
}
