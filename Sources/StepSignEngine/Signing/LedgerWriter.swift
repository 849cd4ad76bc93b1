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

    init(store: any StepSignStore, idleSeconds: Double = 2) {
        self.store = store
        self.idleSeconds = idleSeconds
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
    private func nextBatch() -> [(LedgerAppend, Waiter)]? {
        if !condition.lock(whenValue: true, timeoutSeconds: idleSeconds) {
            // Timed out; a row may have come in between, so decide under the lock.
            condition.lock()
            guard !queue.isEmpty else {
                threadRunning = false
                idleThreadsEnded += 1
                condition.unlock()
                return nil
            }
        }
        let count = min(queue.count, maxBatch)
        let batch = Array(queue.prefix(count))
        queue.removeFirst(count)
        condition.unlock(withValue: !queue.isEmpty)
        return batch
    }

    private func commit(_ batch: [(LedgerAppend, Waiter)]) {
        do {
            let stored = try store.appendLedger(batch.map(\.0))
            guard stored.count == batch.count else { throw LedgerWriterError.shortBatch }
            for ((_, waiter), entry) in zip(batch, stored) {
                waiter.resume(returning: entry)
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
