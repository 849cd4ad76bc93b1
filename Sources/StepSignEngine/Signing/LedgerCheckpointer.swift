import Logging
import NIOConcurrencyHelpers
import StepSignCrypto
import StepSignFormat
import StepSignStorage
import struct Foundation.Date

/// Makes the ledger's checkpoints (SPEC §5.3): after every `ledger.checkpoint_entries`
/// entries (inside the batch's own transaction, see ``LedgerWriter``), every
/// `ledger.checkpoint_seconds` while entries were added (by the ledger writer), on clean
/// shutdown and on `getCheckpoint`. Each is stored and written to the log at info, so the
/// journal holds copies outside the database.
///
/// At each of those moments the log's C2SP checkpoint (SPEC §5.5) of the log as stored is
/// made too, by ``TransparencyLog`` (after the batch's commit, not inside it: its consistency
/// check reads the stored tree). The JWS checkpoints stay until the notes are made inside the
/// append's transaction; see docs/decisions.md.
final class LedgerCheckpointer: Sendable {
    /// `[ledger]` values and the instance name, read from the settings in force.
    struct Settings: Sendable {
        var instance: String
        var entries: Int
        var seconds: Int
    }

    private struct State {
        /// The newest entry this process committed, or nil before the first.
        var head: LedgerHead?
        /// The highest seq a checkpoint of this process covers (-1: none yet).
        var checkpointed: Int64 = -1
        /// When this process last made a checkpoint (or started).
        var lastAt: Date
    }

    private let keyring: Keyring
    private let store: any LedgerStore
    private let log: TransparencyLog
    private let logger: Logger
    private let settings: @Sendable () -> Settings
    private let state: NIOLockedValueBox<State>

    init(keyring: Keyring, store: any LedgerStore, log: TransparencyLog, logger: Logger,
         settings: @escaping @Sendable () -> Settings) {
        self.keyring = keyring
        self.store = store
        self.log = log
        self.logger = logger
        self.settings = settings
        self.state = NIOLockedValueBox(State(lastAt: Date()))
    }

    /// `ledger.checkpoint_entries` in force.
    var entries: Int { settings().entries }

    /// Signs a checkpoint of (seq, hash) with the active key, now.
    func sign(seq: Int64, entryHash: [UInt8], now: Date = Date()) throws -> LedgerCheckpointRecord {
        let (kid, key) = keyring.signer
        let checkpoint = LedgerCheckpoint(iss: settings().instance, seq: seq, entryHash: entryHash,
                                          iat: Int64(now.timeIntervalSince1970))
        let jws = try checkpoint.signed(key: key, kid: kid)
        return LedgerCheckpointRecord(seq: seq, entryHash: entryHash, kid: kid, jws: jws, createdAt: now)
    }

    /// After a committed batch: logs the checkpoints made inside it and remembers the head.
    func didCommit(last: LedgerEntry, made: [LedgerCheckpointRecord]) {
        for checkpoint in made { log(checkpoint, reason: "entries") }
        if !made.isEmpty {
            // Off the writer's path: the next batch does not wait for the note.
            Task { await self.makeLogCheckpoint(reason: "entries") }
        }
        state.withLockedValue { state in
            state.head = LedgerHead(seq: last.seq, entryHash: last.entryHash)
            if let newest = made.last {
                state.checkpointed = max(state.checkpointed, newest.seq)
                state.lastAt = newest.createdAt
            }
        }
    }

    /// Seconds until a timed checkpoint is due: nil when no entry awaits one, 0 or less when
    /// it is due now.
    func secondsUntilDue(now: Date = Date()) -> Double? {
        let seconds = Double(settings().seconds)
        return state.withLockedValue { state in
            guard let head = state.head, head.seq > state.checkpointed else { return nil }
            return seconds - now.timeIntervalSince(state.lastAt)
        }
    }

    /// Checkpoints the head this process committed last if no checkpoint covers it yet (timed,
    /// from the ledger writer between batches).
    func checkpointHeadIfNeeded(reason: String) async {
        guard let head = pendingHead() else { return }
        do {
            let record = try sign(seq: head.seq, entryHash: head.entryHash)
            try await store.appendCheckpoint(record)
            remember(record)
            log(record, reason: reason)
        } catch {
            timedCheckpointFailed(error, reason: reason)
        }
        await makeLogCheckpoint(reason: reason)
    }

    /// The log's C2SP checkpoint of the log as stored now; a failure is logged (a refused
    /// history has raised its alarm already).
    private func makeLogCheckpoint(reason: String) async {
        do {
            _ = try await log.checkpointHead()
        } catch {
            logger.error("cannot make a log checkpoint", metadata: ["reason": "\(reason)", "error": "\(error)"])
        }
    }

    /// `getCheckpoint`: the head as stored now, signed now, as a JWS and as the log's C2SP
    /// checkpoint; stored when no checkpoint of this process covers it yet (so asking again
    /// and again does not grow the tables).
    func checkpointNow() async throws -> (jws: String, note: TransparencyLog.Signed) {
        let head = try await store.ledgerHead()
        let record = try sign(seq: head.seq, entryHash: head.entryHash)
        let isNew = state.withLockedValue { head.seq > $0.checkpointed }
        if isNew {
            try await store.appendCheckpoint(record)
            remember(record)
            log(record, reason: "getCheckpoint")
        }
        return (record.jws, try await log.checkpointHead())
    }

    /// Clean shutdown: a checkpoint of the head, unless this process already made one of it,
    /// and the log's C2SP checkpoint of the log as stored.
    func shutdown() async {
        let head: LedgerHead
        do { head = try await store.ledgerHead() } catch { return }
        if head.seq > state.withLockedValue({ $0.checkpointed }) {
            do {
                let record = try sign(seq: head.seq, entryHash: head.entryHash)
                try await store.appendCheckpoint(record)
                remember(record)
                log(record, reason: "shutdown")
            } catch {
                logger.error("cannot make the shutdown checkpoint", metadata: ["error": "\(error)"])
            }
        }
        await makeLogCheckpoint(reason: "shutdown")
    }

    /// The head this process committed last, if no checkpoint covers it yet.
    private func pendingHead() -> LedgerHead? {
        state.withLockedValue { state in
            guard let head = state.head, head.seq > state.checkpointed else { return nil }
            return head
        }
    }

    /// A timed or shutdown-time checkpoint failed: try again after another
    /// `checkpoint_seconds` (not in a loop), and make a new key if the store refused a revoked one.
    private func timedCheckpointFailed(_ error: any Error, reason: String) {
        state.withLockedValue { $0.lastAt = Date() }
        logger.error("cannot make a ledger checkpoint", metadata: ["reason": "\(reason)", "error": "\(error)"])
        refreshKeysIfRevoked(error)
    }

    /// The store refused a checkpoint because another daemon revoked this one's key: the
    /// keyring makes a new key, and the next checkpoint is signed with it.
    private func refreshKeysIfRevoked(_ error: any Error) {
        guard case StorageError.signingKeyRevoked = error else { return }
        let keyring = self.keyring
        Task { try? await keyring.refresh() }
    }

    private func remember(_ record: LedgerCheckpointRecord) {
        state.withLockedValue { state in
            state.checkpointed = max(state.checkpointed, record.seq)
            state.lastAt = record.createdAt
        }
    }

    private func log(_ record: LedgerCheckpointRecord, reason: String) {
        logger.info("ledger checkpoint", metadata: [
            "seq": "\(record.seq)", "entryHash": "\(Hex.encode(record.entryHash))", "reason": "\(reason)",
            "checkpoint": "\(record.jws)",
        ])
    }
}
