import NIOConcurrencyHelpers
import StepSignStorage

/// Appends signatures and events to the ledger with group commit: one writer for every store.
///
/// Callers queue their row and wait; a drain task takes every queued row (up to `maxBatch`),
/// commits them in one durable transaction (``LedgerStore/appendLedger(_:checkpointEvery:signCheckpoint:)``)
/// and resumes each caller with its entry. While one transaction commits, new rows queue up
/// for the next, so throughput does not collapse to one `fsync` (or one round trip) per
/// signature, and a row is acknowledged only after the transaction that holds it is durable
/// (SPEC §5).
///
/// The drain task exists only while rows wait: the append that finds none draining starts it,
/// and it ends when it finds the queue empty, both decided under the one lock, so exactly one
/// task drains at a time and no row is left behind. An engine therefore needs no run loop and
/// no shutdown of its own (see docs/decisions.md). The task prefers the store's
/// ``LedgerStore/ledgerExecutor``: on SQLite it runs on the store's ledger thread, where the
/// commit blocks, so a row costs one wake-up there and one to resume its caller; on
/// PostgreSQL it awaits the server on the cooperative pool, holding no thread.
///
/// Timed checkpoints (`ledger.checkpoint_seconds`) are made between batches when due; when
/// the queue empties with one still to come, a task sleeps until it is due and drains then.
final class LedgerWriter: Sendable {
    private typealias Waiter = CheckedContinuation<LedgerEntry, any Error>

    private struct State {
        var queue: [(LedgerAppend, Waiter)] = []
        /// Whether a drain task runs (set by the append that starts it, cleared by the task
        /// when it finds the queue empty).
        var draining = false
        /// Whether a task sleeps until a timed checkpoint is due.
        var checkpointTimerPending = false
    }

    private let store: any LedgerStore
    /// The most rows one transaction takes, so one commit never holds callers too long.
    private let maxBatch = 1024
    private let state = NIOLockedValueBox(State())
    /// Makes the checkpoints (SPEC §5.3); nil makes none.
    private let checkpointer: LedgerCheckpointer?

    /// Why nothing may be appended now (SPEC §5.5: the log is not what this daemon signed), or nil.
    private let refusal: @Sendable () -> String?
    /// The size of the last checkpoint this daemon signed (nil: none), read before a batch
    /// is committed.
    private let keptCheckpointSize: @Sendable () -> Int64?
    /// Why a batch committed at this first seq must not be acknowledged (SPEC §5.5: it landed
    /// below a checkpoint this daemon had signed before the commit, so the log was cut behind
    /// its back), or nil.
    private let landedBelowCheckpoint: @Sendable (_ firstSeq: Int64, _ keptSize: Int64) -> String?

    init(store: any LedgerStore, checkpointer: LedgerCheckpointer? = nil, refusal: @escaping @Sendable () -> String? = { nil },
         keptCheckpointSize: @escaping @Sendable () -> Int64? = { nil },
         landedBelowCheckpoint: @escaping @Sendable (_ firstSeq: Int64, _ keptSize: Int64) -> String? = { _, _ in nil }) {
        self.store = store
        self.checkpointer = checkpointer
        self.refusal = refusal
        self.keptCheckpointSize = keptCheckpointSize
        self.landedBelowCheckpoint = landedBelowCheckpoint
    }

    /// Appends `entry` and returns it as stored (with its sequence number and hashes), once
    /// the transaction that holds it is durable. Refused (``StorageError/ledgerTreeBroken(_:)``)
    /// while the log is refused.
    func append(_ entry: LedgerAppend) async throws -> LedgerEntry {
        if let why = refusal() { throw StorageError.ledgerTreeBroken(why) }
        return try await withCheckedThrowingContinuation { (waiter: Waiter) in
            let start = state.withLockedValue { state in
                state.queue.append((entry, waiter))
                defer { state.draining = true }
                return !state.draining
            }
            if start { startDraining() }
        }
    }

    private func startDraining() {
        Task(executorPreference: store.ledgerExecutor) { await self.drain() }
    }

    /// Commits batches until the queue is empty, making a timed checkpoint between batches
    /// when one is due.
    private func drain() async {
        while true {
            if let due = checkpointer?.secondsUntilDue(), due <= 0 {
                await checkpointer?.checkpointHeadIfNeeded(reason: "seconds")
            }
            guard let batch = takeBatch() else { return }
            await commit(batch)
        }
    }

    /// Takes up to `maxBatch` queued rows; nil (and the drain ends) when none are queued.
    private func takeBatch() -> [(LedgerAppend, Waiter)]? {
        let (batch, checkpointDue) = state.withLockedValue { state -> ([(LedgerAppend, Waiter)]?, Double?) in
            guard state.queue.isEmpty else {
                let count = min(state.queue.count, maxBatch)
                defer { state.queue.removeFirst(count) }
                return (Array(state.queue.prefix(count)), nil)
            }
            state.draining = false
            guard !state.checkpointTimerPending, let due = checkpointer?.secondsUntilDue() else { return (nil, nil) }
            state.checkpointTimerPending = true
            return (nil, due)
        }
        if let checkpointDue { scheduleCheckpoint(in: checkpointDue) }
        return batch
    }

    /// Sleeps `seconds`, then drains (which makes the checkpoint) unless a drain task runs
    /// (it makes it between batches).
    private func scheduleCheckpoint(in seconds: Double) {
        Task(executorPreference: store.ledgerExecutor) {
            try? await Task.sleep(for: .milliseconds(Int64(max(seconds, 0) * 1000) + 1))
            let start = self.state.withLockedValue { state in
                state.checkpointTimerPending = false
                defer { state.draining = true }
                return !state.draining
            }
            if start { await self.drain() }
        }
    }

    /// Commits one batch and resumes its callers: each with its entry, or all with the error.
    private func commit(_ batch: [(LedgerAppend, Waiter)]) async {
        do {
            // Checkpoints at multiples of `checkpoint_entries` are signed inside the batch's
            // transaction: one signature per that many entries.
            let made = NIOLockedValueBox<[LedgerCheckpointRecord]>([])
            let checkpointer = self.checkpointer
            // The checkpoint kept before the commit: one signed meanwhile (getCheckpoint, a
            // witness's pusher) may already cover this batch's rows, which is no cut.
            let keptBefore = keptCheckpointSize()
            let stored = try await store.appendLedger(batch.map(\.0), checkpointEvery: checkpointer?.entries ?? 0) { seq, hash in
                guard let checkpointer else { throw LedgerWriterError.noCheckpointer }
                let record = try checkpointer.sign(seq: seq, entryHash: hash)
                made.withLockedValue { $0.append(record) }
                return record
            }
            guard stored.count == batch.count else { throw LedgerWriterError.shortBatch }
            // Committed on a log shorter than one this daemon signed: no signature made on a
            // cut log is handed out (the rows stay, unacknowledged, for the audit to show).
            if let first = stored.first, let keptBefore, let why = landedBelowCheckpoint(first.seq, keptBefore) {
                throw StorageError.ledgerTreeBroken(why)
            }
            for ((_, waiter), entry) in zip(batch, stored) {
                waiter.resume(returning: entry)
            }
            if let checkpointer, let last = stored.last {
                checkpointer.didCommit(last: last, made: made.withLockedValue { $0 })
            }
        } catch {
            for (_, waiter) in batch {
                waiter.resume(throwing: error)
            }
        }
    }
}

/// The ledger writer's own failures, which mean a store broke its contract.
enum LedgerWriterError: Error {
    /// The store returned a different number of rows than it was given.
    case shortBatch
    /// The store asked for a checkpoint of a writer that makes none.
    case noCheckpointer
}
