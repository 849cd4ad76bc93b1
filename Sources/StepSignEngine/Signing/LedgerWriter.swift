internal import CSystemShims
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
///
/// A store whose ``StepSignStore/ledgerWriting`` is ``LedgerWriting/async`` (PostgreSQL: a
/// commit is a network round trip) gets the same queue and group commit, drained by a task
/// that awaits ``StepSignStore/commitLedgerBatch(takingRowsWith:checkpointEvery:signCheckpoint:)``
/// instead of a thread that blocks: no thread (event loop, cooperative pool or ours) waits on
/// the network, and the store takes the batch when it is ready for it. The task ends as soon as the queue is
/// empty; a timed checkpoint still due then is made by a task that sleeps until it is due.
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
    /// Async stores: whether a task sleeps until a timed checkpoint is due.
    private var checkpointTimerPending = false

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
                if store.ledgerWriting == .async {
                    Task.detached { await self.runAsync() }
                } else {
                    Thread { self.run() }.start()
                }
            }
        }
    }

    // MARK: Async stores

    /// The writer task of an async store: commits batches until the queue is empty, making a
    /// timed checkpoint between batches when one is due.
    private func runAsync() async {
        while true {
            if let due = checkpointer?.secondsUntilDue(), due <= 0 {
                await checkpointer?.checkpointHeadIfNeededAsync(reason: "seconds")
            }
            condition.lock()
            if queue.isEmpty {
                threadRunning = false
                idleThreadsEnded += 1
                let due = checkpointer?.secondsUntilDue()
                let startTimer = due != nil && !checkpointTimerPending
                if startTimer { checkpointTimerPending = true }
                condition.unlock(withValue: false)
                if startTimer, let due { scheduleCheckpoint(in: due) }
                return
            }
            // The rows stay queued: the store takes them once it holds the ledger's lock.
            condition.unlock(withValue: true)
            await commitAsync()
        }
    }

    /// Takes up to `maxBatch` queued rows.
    private func takeBatch() -> [(LedgerAppend, Waiter)] {
        condition.lock()
        let count = min(queue.count, maxBatch)
        let batch = Array(queue.prefix(count))
        queue.removeFirst(count)
        condition.unlock(withValue: !queue.isEmpty)
        return batch
    }

    /// Sleeps `seconds`, then makes the timed checkpoint unless the writer task runs (it makes
    /// it between batches).
    private func scheduleCheckpoint(in seconds: Double) {
        Task.detached {
            try? await Task.sleep(for: .milliseconds(Int64(max(seconds, 0) * 1000) + 1))
            self.condition.lock()
            self.checkpointTimerPending = false
            let start = !self.threadRunning
            if start { self.threadRunning = true }
            self.condition.unlock(withValue: !self.queue.isEmpty)
            if start { await self.runAsync() }
        }
    }

    /// Commits one batch of the queued rows, taken by the store when it is ready for them
    /// (``StepSignStore/commitLedgerBatch(takingRowsWith:checkpointEvery:signCheckpoint:)``),
    /// and resumes their callers. When the store fails before taking any, the rows queued then
    /// get its error, as a batch taken first would have.
    private func commitAsync() async {
        let taken = NIOLockedValueBox<[(LedgerAppend, Waiter)]>([])
        do {
            let made = NIOLockedValueBox<[LedgerCheckpointRecord]>([])
            let checkpointer = self.checkpointer
            let stored = try await store.commitLedgerBatch(takingRowsWith: {
                let batch = self.takeBatch()
                taken.withLockedValue { $0 = batch }
                return batch.map(\.0)
            }, checkpointEvery: checkpointer?.entries ?? 0) { seq, hash in
                guard let checkpointer else { throw LedgerWriterError.shortBatch }
                let record = try checkpointer.sign(seq: seq, entryHash: hash)
                made.withLockedValue { $0.append(record) }
                return record
            }
            let batch = taken.withLockedValue { $0 }
            guard stored.count == batch.count else { throw LedgerWriterError.shortBatch }
            for ((_, waiter), entry) in zip(batch, stored) {
                waiter.resume(returning: entry)
            }
            if let checkpointer, let last = stored.last {
                checkpointer.didCommit(last: last, made: made.withLockedValue { $0 })
            }
        } catch {
            var batch = taken.withLockedValue { $0 }
            if batch.isEmpty { batch = takeBatch() }
            for (_, waiter) in batch {
                waiter.resume(throwing: error)
            }
        }
    }

    /// The writer thread: commits batches until no row comes for `idleSeconds`.
    private func run() {
        // Named from inside, by the kernel's own call: a name set before `start()` never
        // reaches the kernel, and Foundation's `Thread.current.name` reaches it only when the
        // starting thread has already recorded the new thread's handle — under load it has
        // not, and the thread showed in `top -H` and perf as the event loop that started it.
        _ = stepsign_name_this_thread("stepsign-ledger")
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
