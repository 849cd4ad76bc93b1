import Logging
import NIOConcurrencyHelpers
import StepSignProtocol
import StepSignStorage
import StepSignMetrics

/// Appends signatures and events to the ledger with group commit: one writer for every store.
///
/// Callers queue their rows (one signature's, or a batch's: a group never split between
/// transactions) and wait; a drain task takes every queued group (up to `maxBatch` rows),
/// commits them in one durable transaction (the log core, ``LogCore``, computes the batch and the
/// store commits it, ``LedgerStore/commitLedger(_:)``)
/// and resumes each caller with its entries. While one transaction commits, new rows queue up
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
    /// Unchecked: a checked continuation allocates a canary object per signature (issue 43).
    /// Each group's waiter is resumed exactly once, by ``commit(_:)``, in either of its paths.
    private typealias Waiter = UnsafeContinuation<[LedgerEntry], any Error>

    /// Rows one caller appends together (one signature, or a batch's), and the caller.
    private struct Group {
        var rows: [LedgerAppend]
        var waiter: Waiter
    }

    private struct State {
        var queue: [Group] = []
        /// Whether a drain task runs (set by the append that starts it, cleared by the task
        /// when it finds the queue empty).
        var draining = false
        /// Whether a task sleeps until a timed checkpoint is due.
        var checkpointTimerPending = false
    }

    private let store: any LedgerStore
    /// The most rows one transaction takes, so one commit never holds callers too long (a
    /// caller's group larger than this goes in a transaction of its own).
    private let maxBatch = 1024
    private let state = NIOLockedValueBox(State())
    /// Makes the timed checkpoints (SPEC §5.3); nil makes none.
    private let checkpointer: LedgerCheckpointer?
    /// Computes each batch (rows, nodes, checkpoints) and commits it (SPEC §5.5).
    private let core: LogCore

    /// Refuses every append while the log is refused (SPEC §5.5: not what this daemon signed).
    private let logAlarm: LogAlarm?
    /// Cleared after each batch that was committed and acknowledged.
    private let noSpaceAlarm: NoSpaceAlarm?
    /// The histograms of each commit's time and rows, made once (not looked up per batch).
    private let commitSeconds = StepSignMetric.ledgerCommitSeconds.durationHistogram()
    private let batchEntries = StepSignMetric.ledgerBatchEntries.valueHistogram()

    init(store: any LedgerStore, checkpointer: LedgerCheckpointer? = nil, logger: Logger = Logger(label: "stepsign.ledger"),
         logAlarm: LogAlarm? = nil, noSpaceAlarm: NoSpaceAlarm? = nil) {
        self.store = store
        self.checkpointer = checkpointer
        self.core = LogCore(store: store, log: checkpointer?.transparencyLog, logger: logger,
                            every: { checkpointer?.entries ?? 0 })
        self.logAlarm = logAlarm
        self.noSpaceAlarm = noSpaceAlarm
    }

    /// Appends `entry` and returns it as stored (with its sequence number and hashes), once
    /// the transaction that holds it is durable. Refused (``StorageError/ledgerTreeBroken(_:)``)
    /// while the log is refused.
    nonisolated(nonsending) func append(_ entry: LedgerAppend) async throws -> LedgerEntry {
        guard let stored = try await append(all: [entry]).first else { throw LedgerWriterError.shortBatch }
        return stored
    }

    /// Appends `entries` in order, in one transaction (all of them are in the ledger, next to
    /// each other, or none), and returns them as stored once it is durable (SPEC §3.4: a
    /// batch is committed together or not at all).
    nonisolated(nonsending) func append(all entries: [LedgerAppend]) async throws -> [LedgerEntry] {
        if let why = logAlarm?.current { throw StorageError.ledgerTreeBroken(why) }
        guard !entries.isEmpty else { return [] }
        return try await withUnsafeThrowingContinuation { (waiter: Waiter) in
            let start = state.withLockedValue { state in
                state.queue.append(Group(rows: entries, waiter: waiter))
                defer { state.draining = true }
                return !state.draining
            }
            if start { startDraining() }
        }
    }

    /// Appends `entry` alone, in its own durable transaction, although the log is refused: the
    /// one row that may be, `admin.recover`'s `logEpochStarted` event (SPEC §5.5), which the
    /// transparency log appends while it holds its checkpoint queue. It does not go through the
    /// queue: every other group is refused meanwhile, and it is not checked against the kept
    /// checkpoint (it is the event that says the log no longer extends it).
    func appendPastRefusal(_ entry: LedgerAppend) async throws -> LedgerEntry {
        // Computed on the log as stored: the log is refused, and `admin.recover` builds the
        // tail from entries again right after.
        let stored = try await store.appendLedger([entry])
        guard let first = stored.first, stored.count == 1 else { throw LedgerWriterError.shortBatch }
        return first
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

    /// Takes queued groups, whole, up to `maxBatch` rows (at least one group); nil (and the
    /// drain ends) when none are queued.
    private func takeBatch() -> [Group]? {
        let (batch, checkpointDue) = state.withLockedValue { state -> ([Group]?, Double?) in
            guard state.queue.isEmpty else {
                var count = 0, rows = 0
                for group in state.queue {
                    if count > 0 && rows + group.rows.count > maxBatch { break }
                    count += 1
                    rows += group.rows.count
                }
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

    /// Commits one batch and resumes its callers: each with its entries, or all with the error.
    private func commit(_ batch: [Group]) async {
        do {
            let rows = batch.count == 1 ? batch[0].rows : batch.flatMap(\.rows)
            let started = ContinuousClock.now
            let stored = try await append(rows)
            guard stored.count == rows.count else { throw LedgerWriterError.shortBatch }
            commitSeconds.observe(ContinuousClock.now - started)
            batchEntries.observe(Double(rows.count))
            var next = 0
            for group in batch {
                group.waiter.resume(returning: Array(stored[next..<next + group.rows.count]))
                next += group.rows.count
            }
            noSpaceAlarm?.cleared()
        } catch {
            for group in batch {
                group.waiter.resume(throwing: error)
            }
        }
    }

    /// Appends `rows` in one transaction, with the log's checkpoints at multiples of
    /// `checkpoint_entries` (SPEC §5.3, §5.5): computed by the log core on the tail it computed
    /// from entries, committed by the store if the log's tail is still that one.
    private func append(_ rows: [LedgerAppend]) async throws -> [LedgerEntry] {
        let appended = try await core.append(rows)
        checkpointer?.didCommit(appended.entries, made: appended.checkpoint)
        return appended.entries
    }
}

/// The ledger writer's own failures, which mean a store broke its contract.
enum LedgerWriterError: Error {
    /// The store returned a different number of rows than it was given.
    case shortBatch
}
