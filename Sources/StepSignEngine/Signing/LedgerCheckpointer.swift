import Logging
import NIOConcurrencyHelpers
import StepSignCrypto
import StepSignFormat
import StepSignStorage
import struct Foundation.Date

/// Makes the log's checkpoints (SPEC §5.3, §5.5) at the moments §5.3 names: after every
/// `ledger.checkpoint_entries` entries (inside the batch's own transaction: the ledger writer
/// hands the store ``appendSigner``), every `ledger.checkpoint_seconds` while entries were
/// added (by the ledger writer), on clean shutdown and on `getCheckpoint`. Each is a C2SP
/// checkpoint signed by ``TransparencyLog``, stored and written to the log at info, so the
/// journal holds copies outside the database. (JWS checkpoints, which these replace, stay
/// readable in older ledgers.)
final class LedgerCheckpointer: Sendable {
    /// `[ledger]` values, read from the settings in force.
    struct Settings: Sendable {
        var entries: Int
        var seconds: Int
    }

    private struct State {
        /// The newest entry this process committed, or nil before the first.
        var head: Int64?
        /// The highest tree size a checkpoint of this process covers (-1: none yet).
        var checkpointed: Int64 = -1
        /// When this process last made a checkpoint (or started).
        var lastAt: Date
    }

    private let log: TransparencyLog
    private let logger: Logger
    private let settings: @Sendable () -> Settings
    private let state: NIOLockedValueBox<State>

    init(log: TransparencyLog, logger: Logger, settings: @escaping @Sendable () -> Settings) {
        self.log = log
        self.logger = logger
        self.settings = settings
        self.state = NIOLockedValueBox(State(lastAt: Date()))
    }

    /// The signer of the checkpoints the transaction of `rows`, prepared on `prepared`,
    /// makes at multiples of `ledger.checkpoint_entries` in force (nil when it is 0).
    func appendSigner(prepared: LogFrontier.Tail, rows: [LedgerAppend]) -> (any LogCheckpointSigner)? {
        let entries = settings().entries
        return entries > 0 ? log.appendSigner(every: entries, prepared: prepared, rows: rows) : nil
    }

    /// The tail computed from entries that a batch is prepared on (SPEC §5.5).
    func prepare() async throws -> LogFrontier.Tail {
        try await log.prepareAppend()
    }

    /// After a committed batch: its checkpoint, if it made one, is kept; the head is
    /// remembered; the tail computed from entries moves past the batch (throws, refusing the
    /// log, when the stored entries do not chain onto it).
    func didCommit(_ entries: [LedgerEntry], rows: [LedgerAppend], prepared: LogFrontier.Tail) async throws {
        guard let last = entries.last else { return }
        let made = log.appendCommitted()
        state.withLockedValue { state in
            state.head = last.seq
            if let made { remember(made.checkpoint.size, &state) }
        }
        do {
            try await log.appendCommitted(prepared: prepared, entries: entries, rows: rows, made: made)
        } catch StorageError.ledgerTreeBroken(let why) {
            throw StorageError.ledgerTreeBroken(why)
        } catch {
            // The rows are durable: a store that fails while other daemons' entries are read
            // (a server that stops just after the commit) must not turn them into a refusal the
            // caller would take for "not signed". The frontier stays where it was and reads
            // these entries, hashed from their content, before the next batch is prepared.
            logger.warning("the log's tail is read again before the next batch", metadata: ["error": "\(error)"])
        }
    }

    /// A batch's checkpoint found the store's root at `size` other than its entries': other
    /// daemons' entries are read, or, when there were none, the log is refused.
    func rootDisagreed(size: Int64) async throws {
        try await log.appendRootDisagreed(size: size)
    }

    /// After a failed batch: its checkpoint, if it made one, is forgotten.
    func appendFailed() {
        log.appendFailed()
    }

    /// Reads the log's epochs again (a batch found one this daemon had not read).
    func refreshOrigins() async throws {
        try await log.refreshOriginsForAppend()
    }

    /// Seconds until a timed checkpoint is due: nil when no entry awaits one, 0 or less when
    /// it is due now.
    func secondsUntilDue(now: Date = Date()) -> Double? {
        let seconds = Double(settings().seconds)
        return state.withLockedValue { state in
            guard let head = state.head, head > state.checkpointed else { return nil }
            return seconds - now.timeIntervalSince(state.lastAt)
        }
    }

    /// Checkpoints the log if no checkpoint covers the head this process committed last
    /// (timed, from the ledger writer between batches).
    func checkpointHeadIfNeeded(reason: String) async {
        guard state.withLockedValue({ state in state.head.map { $0 > state.checkpointed } ?? false }) else { return }
        do {
            _ = try await checkpointHead(reason: reason)
        } catch {
            // Tried again after another `checkpoint_seconds`, not in a loop.
            state.withLockedValue { $0.lastAt = Date() }
            logger.error("cannot make a log checkpoint", metadata: ["reason": "\(reason)", "error": "\(error)"])
        }
    }

    /// `getCheckpoint`: the log as stored now, as a C2SP checkpoint (the kept one when it is
    /// of that size, so asking again and again does not grow the tables).
    func checkpointNow() async throws -> TransparencyLog.Signed {
        try await checkpointHead(reason: "getCheckpoint")
    }

    /// Clean shutdown: a checkpoint of the log as stored.
    func shutdown() async {
        do {
            _ = try await checkpointHead(reason: "shutdown")
        } catch {
            logger.error("cannot make the shutdown checkpoint", metadata: ["error": "\(error)"])
        }
    }

    private func checkpointHead(reason: String) async throws -> TransparencyLog.Signed {
        let signed = try await log.checkpointHead(reason: reason)
        state.withLockedValue { remember(signed.checkpoint.size, &$0) }
        return signed
    }

    private func remember(_ size: Int64, _ state: inout State) {
        state.checkpointed = max(state.checkpointed, size)
        state.lastAt = Date()
    }
}
