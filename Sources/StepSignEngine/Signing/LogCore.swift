import Logging
import StepSignFormat
import StepSignProtocol
import StepSignStorage
import struct Foundation.Date

/// The log core (SPEC §5, §5.5; docs/architecture.md "The log core"): the one place that
/// numbers, chains and hashes the log, for every store.
///
/// A batch is computed whole before any transaction, on the tail this daemon computed from
/// entries (``LogFrontier``): its rows (seq, previous and entry hash), the tree nodes its
/// leaves complete, and the checkpoint notes of the multiples of `checkpoint_entries` it
/// reaches, signed by ``TransparencyLog`` after the kept checkpoint (written as pending before
/// the commit). The store then only compares the log's tail with the expected one and inserts
/// (``LedgerStore/commitLedger(_:)``): `committed`, or `tailMoved` when another daemon's
/// entries came first, or the log was cut or rewritten behind this one's back. Then the
/// entries after the tail are read and hashed (a log that does not extend the tail is refused)
/// and the batch is computed again, as a compare-and-swap.
final class LogCore: Sendable {
    /// A committed batch: its entries as stored, the checkpoint it made, if any, and how many
    /// commits it took (1: no race lost).
    struct Appended: Sendable {
        var entries: [LedgerEntry]
        var checkpoint: TransparencyLog.Signed?
        var tries: Int = 1
    }

    private let store: any LedgerStore
    /// Signs the checkpoints and keeps the frontier; nil for a core that makes no
    /// checkpoints (a ledger writer on its own, in tests), which keeps a frontier of its own.
    private let log: TransparencyLog?
    private let frontier: LogFrontier
    /// `ledger.checkpoint_entries` in force (0: none).
    private let every: @Sendable () -> Int
    private let logger: Logger
    /// ``retryBudget``, or a test's.
    private let budget: Duration

    init(store: any LedgerStore, log: TransparencyLog?, logger: Logger, every: @escaping @Sendable () -> Int,
         retryBudget: Duration = LogCore.retryBudget) {
        self.store = store
        self.log = log
        self.frontier = log?.frontier ?? LogFrontier(store: store)
        self.every = every
        self.logger = logger
        self.budget = retryBudget
    }

    /// How long a batch is computed again and again while the log's tail moves under it
    /// (another daemon on the same PostgreSQL committing first) before its callers get 14.
    /// A budget of time, not of tries: under a steady load of the other daemon one batch lost
    /// 64 races in a row in ~100 ms (bench-ab's PostgreSQL pair: ~20 requests in 4 s refused),
    /// a wait its callers would rather have than a refusal. docs/decisions.md, "One log core".
    static let retryBudget: Duration = .seconds(5)

    /// The tries a batch always has, however long they take: a host so loaded that one try
    /// outlasts ``retryBudget`` (a test run's first seconds saw it) must not turn the first lost
    /// race into 14. A batch gives up only past both.
    static let minimumTries = 64

    /// After this many races lost in a row, a batch's commits claim the log's turn
    /// (``LedgerCommit/claimTurn``): another daemon's batches then wait for it, so that no
    /// batch waits behind more than about one of theirs. docs/decisions.md, "One log core".
    static let lossesBeforeTurn = 2

    /// Appends `rows` in one transaction (compare-and-swap on the log's tail), with the
    /// checkpoints at multiples of `checkpoint_entries` in it, and returns them as stored once
    /// the commit is durable.
    func append(_ rows: [LedgerAppend]) async throws -> Appended {
        // The checkpoint kept before the commit: one signed meanwhile (getCheckpoint, a
        // witness's pusher) may already cover this batch's rows, which is no cut.
        let keptBefore = log?.latest?.checkpoint.size
        var originsRefreshed = false
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: budget)
        var tries = 0
        var lost = 0
        let claim = LedgerTurnClaim()
        var claimed = false
        // A turn claimed and still held (the batch gives up, or fails between its tries) is
        // given back at once: an empty commit with the claim.
        defer {
            if claimed { releaseTurn(claim) }
        }
        while tries < Self.minimumTries || clock.now < deadline {
            tries += 1
            let tail = try await prepare()
            let every = Int64(log == nil ? 0 : max(every(), 0))
            var commit = LedgerCommit(items: rows, after: LedgerHead(seq: tail.size, entryHash: tail.chainHash), tree: tail.tree,
                                      createdAt: store.ledgerTime(Date()), rootsAt: { every > 0 && $0 % every == 0 })
            if claimed { commit.claimTurn = claim }
            if let log, !commit.roots.isEmpty {
                let proof = try await log.proofForCommit(commit)
                guard let signed = try log.signForCommit(roots: commit.roots, prepared: tail, proof: proof) else {
                    // A checkpoint was kept past this tail meanwhile: the log grew; read on.
                    try await catchUp()
                    continue
                }
                commit.checkpoints = signed.records
                commit.expectedEpochs = signed.epochs
            }
            let outcome: LedgerCommitOutcome
            do {
                outcome = try await store.commitLedger(commit)
            } catch {
                // The store gave the turn back with its failed commit.
                claimed = false
                log?.appendFailed()
                throw error
            }
            switch outcome {
            case .committed(let entries):
                claimed = false
                guard entries.count == rows.count else {
                    log?.appendFailed()
                    throw LedgerWriterError.shortBatch
                }
                let made = log?.appendCommitted()
                try await advance(prepared: tail, past: entries, batch: commit, made: made)
                // Committed on a log shorter than one this daemon signed (cut behind its back to
                // exactly the tail it expected): no signature made on a cut log is handed out
                // (the rows stay, unacknowledged, for the audit to show).
                if let log, let first = entries.first, let keptBefore,
                   let why = log.landedBelowCheckpoint(firstSeq: first.seq, keptSize: keptBefore) {
                    throw StorageError.ledgerTreeBroken(why)
                }
                return Appended(entries: entries, checkpoint: made, tries: tries)
            case .tailMoved(_, let epochs):
                lost += 1
                log?.appendFailed()
                if let log, epochs != log.knownOrigins.epochs.count, !originsRefreshed {
                    // Another daemon's `admin.recover` started an epoch: its origin is read first.
                    originsRefreshed = true
                    try await log.refreshOriginsForAppend()
                }
                if lost >= Self.lossesBeforeTurn, !claimed {
                    // The turn first, then the read: the entries read under it are all there
                    // will be, so the next commit finds the tail it expects.
                    claimed = true
                    _ = try await store.commitLedger(.takingTurn(claim))
                }
                try await catchUp()
            }
        }
        logger.warning("a batch lost every race for the log's tail within its time budget; its requests get 14", metadata: [
            "tries": "\(tries)", "rows": "\(rows.count)", "budgetSeconds": "\(budget.components.seconds)",
        ])
        throw StepSignError(.busy, "the log grew under every try of this batch: ask again")
    }

    /// Gives back the log's turn the store keeps for `claim` (an empty commit with it), without
    /// waiting: its connection goes back to the pool and the other daemons commit again.
    private func releaseTurn(_ claim: LedgerTurnClaim) {
        let store = store
        Task { _ = try? await store.commitLedger(.givingBackTurn(claim)) }
    }

    /// The tail computed from entries that a batch is computed on (built first if it was not).
    private func prepare() async throws -> LogFrontier.Tail {
        if let log { return try await log.prepareAppend() }
        return try await Self.fromEntries { try await frontier.ready(kept: nil, head: nil) }
    }

    /// Reads the entries after the tail (another daemon's), checked and hashed; a log that no
    /// longer extends the tail (cut, rewritten) is refused.
    private func catchUp() async throws {
        if let log { return try await log.catchUpForAppend() }
        try await Self.fromEntries { _ = try await frontier.catchUp(kept: nil, head: nil) }
    }

    /// After the commit: the tail moves past the batch. The rows are durable: a store that
    /// fails while other daemons' entries are read (a server that stops just after the commit)
    /// must not turn them into a refusal the caller would take for "not signed". The frontier
    /// then reads these entries, hashed from their content, before the next batch; only a log
    /// that does not extend the tail refuses.
    private func advance(prepared: LogFrontier.Tail, past entries: [LedgerEntry], batch: LedgerCommit,
                         made: TransparencyLog.Signed?) async throws {
        do {
            if let log {
                try await log.appendCommitted(prepared: prepared, entries: entries, batch: batch, made: made)
            } else {
                try await Self.fromEntries {
                    try await frontier.advance(prepared: prepared, past: entries, batch: batch, kept: nil, head: nil)
                }
            }
        } catch StorageError.ledgerTreeBroken(let why) {
            throw StorageError.ledgerTreeBroken(why)
        } catch {
            logger.warning("the log's tail is read again before the next batch", metadata: ["error": "\(error)"])
        }
    }

    /// A core without a transparency log has no alarm: a disagreement is the store's error.
    private static func fromEntries<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let disagreement as LogFrontier.Disagreement {
            throw StorageError.ledgerTreeBroken(disagreement.description)
        }
    }
}
