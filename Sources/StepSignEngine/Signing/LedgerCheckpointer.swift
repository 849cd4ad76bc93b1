import Logging
import NIOConcurrencyHelpers
import StepSignCrypto
import StepSignFormat
import StepSignStorage
import struct Foundation.Date

/// Makes the log's checkpoints (SPEC §5.3, §5.5) at the moments §5.3 names: after every
/// `ledger.checkpoint_entries` entries (with the batch that reaches them: the log core,
/// ``LogCore``, signs them before the commit), every `ledger.checkpoint_seconds` while entries were
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

    /// `ledger.checkpoint_entries` in force: the log core makes a checkpoint of every multiple.
    var entries: Int { settings().entries }

    /// The transparency log that signs the checkpoints.
    var transparencyLog: TransparencyLog { log }

    /// After a committed batch: the head is remembered, with the checkpoint it made, if any.
    func didCommit(_ entries: [LedgerEntry], made: TransparencyLog.Signed?) {
        guard let last = entries.last else { return }
        state.withLockedValue { state in
            state.head = last.seq
            if let made { remember(made.checkpoint.size, &state) }
        }
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
