import StepSignStorage

/// Appends signatures to the ledger with group commit.
///
/// Callers wait for their own row; while one transaction is being committed, new rows queue
/// up and go into the next one together. A row is acknowledged only after the transaction
/// that holds it is durably committed (SPEC §5), and throughput does not collapse to one
/// `fsync` per signature.
actor LedgerWriter {
    private typealias Waiter = CheckedContinuation<LedgerEntry, any Error>

    private let store: any StepSignStore
    private var queue: [(LedgerAppend, Waiter)] = []
    private var flushing = false
    /// The most rows one transaction takes, so one commit never holds callers too long.
    private let maxBatch = 1024

    init(store: any StepSignStore) {
        self.store = store
    }

    /// Appends `entry` and returns it as stored (with its sequence number and hashes).
    func append(_ entry: LedgerAppend) async throws -> LedgerEntry {
        try await withCheckedThrowingContinuation { (waiter: Waiter) in
            queue.append((entry, waiter))
            if !flushing {
                flushing = true
                Task { await self.flush() }
            }
        }
    }

    private func flush() async {
        while !queue.isEmpty {
            let count = min(queue.count, maxBatch)
            let batch = Array(queue.prefix(count))
            queue.removeFirst(count)
            do {
                let stored = try await store.appendLedger(batch.map(\.0))
                guard stored.count == batch.count else { throw LedgerWriterError.shortBatch }
                for (waiter, entry) in zip(batch.map(\.1), stored) {
                    waiter.resume(returning: entry)
                }
            } catch {
                for (_, waiter) in batch {
                    waiter.resume(throwing: error)
                }
            }
        }
        flushing = false
    }
}

/// The store returned a different number of rows than it was given.
enum LedgerWriterError: Error {
    case shortBatch
}
