import Logging
import NIOConcurrencyHelpers
import StepSignFormat
import StepSignProtocol
import StepSignStorage

/// The log's epochs as this daemon knows them (SPEC §5.5, `admin.recover`): read from the store,
/// where they are rows of an append-only table, and each taken only once the ledger entry at
/// its first index is a `logEpochStarted` event, signed by a trusted key, that starts that
/// origin after the one before. The database is the index; the signed event is the evidence.
final class LogEpochs: Sendable {
    private struct State {
        var origins: LogOrigins
        /// The size each epoch's event says the log had when it started (`foundSize`), by epoch.
        var foundSizes: [Int64: Int64] = [:]
    }

    private let state: NIOLockedValueBox<State>
    private let store: any LedgerStore & LogEpochStore
    private let keyring: Keyring
    private let logger: Logger

    init(first origin: String, store: any LedgerStore & LogEpochStore, keyring: Keyring, logger: Logger) {
        self.state = NIOLockedValueBox(State(origins: LogOrigins(first: origin)))
        self.store = store
        self.keyring = keyring
        self.logger = logger
    }

    /// The origins of the epochs taken so far.
    var known: LogOrigins { state.withLockedValue { $0.origins } }

    /// Reads the stored epochs and takes the new ones. Returns why the log must be refused
    /// (epochs removed or changed behind the daemon's back, or one that no signed event
    /// starts), or nil.
    func refresh() async throws -> String? {
        let stored = try await store.logEpochs()
        var known = self.known
        guard stored.count >= known.epochs.count, Array(stored.prefix(known.epochs.count)) == known.epochs else {
            return "the log's epochs in the database are not the ones this daemon read before: rows were removed or changed"
        }
        guard stored.count > known.epochs.count else { return nil }
        var foundSizes: [Int64: Int64] = [:]
        for epoch in stored.dropFirst(known.epochs.count) {
            switch try await check(epoch, after: known) {
            case let .success(size): foundSizes[epoch.epoch] = size
            case let .failure(why):
                return "the database names a log epoch \"\(epoch.origin)\" from index \(epoch.firstIndex) that no signed logEpochStarted event starts (\(why.text))"
            }
            known.epochs.append(epoch)
        }
        state.withLockedValue { state in
            state.origins = known
            state.foundSizes.merge(foundSizes) { first, _ in first }
        }
        logger.notice("the log goes on under a new origin (a log epoch)", metadata: ["origin": "\(known.current)"])
        return nil
    }

    /// For a daemon whose last checkpoint is `kept`: the size found by the first epoch started
    /// after the one of `kept`'s origin, at an index below `kept`'s size (another daemon on the
    /// same database recovered from a restore that cut this one's history too), or nil.
    func foundSize(ofEpochCutting kept: LogCheckpoint) -> Int64? {
        state.withLockedValue { state in
            guard let position = state.origins.all.firstIndex(of: kept.origin),
                  let epoch = state.origins.epochs.dropFirst(position).first(where: { $0.firstIndex < kept.size })
            else { return nil }
            return state.foundSizes[epoch.epoch]
        }
    }

    /// Every stored epoch checked from the first, as ``refresh()`` takes new ones (SPEC §5.5,
    /// `admin.auditVerify`): each must be started by its signed `logEpochStarted` event after
    /// the one before, and those `taken` (the epochs the daemon reads by) must still be there
    /// unchanged. Returns the origins the audit found (to check the checkpoints' origins by)
    /// or why not.
    func audit(taken: LogOrigins) async throws -> Result<LogOrigins, Problem> {
        let stored = try await store.logEpochs()
        var audited = LogOrigins(first: taken.first)
        for epoch in stored {
            if case let .failure(why) = try await check(epoch, after: audited) {
                return .failure(Problem(text: "the log epoch \(epoch.epoch) \"\(epoch.origin)\" from index \(epoch.firstIndex) is not started by a signed event: \(why.text)"))
            }
            audited.epochs.append(epoch)
        }
        guard Array(stored.prefix(taken.epochs.count)) == taken.epochs else {
            return .failure(Problem(text: "the log's epochs in the database are not the ones this daemon read before: rows were removed or changed"))
        }
        return .success(audited)
    }

    struct Problem: Error {
        var text: String
    }

    /// The `foundSize` of the `logEpochStarted` event that starts `epoch` after the epochs of
    /// `known`, or why there is none: its number and origin the next ones, its index past the
    /// last epoch's, and the entry there an event of that kind, signed by a trusted key, naming
    /// that origin and the current one as the previous.
    private func check(_ epoch: LogEpochRecord, after known: LogOrigins) async throws -> Result<Int64, Problem> {
        let next = known.next
        guard epoch.epoch == next.epoch, epoch.origin == next.origin else {
            return .failure(Problem(text: "the next epoch is \(next.epoch), \"\(next.origin)\""))
        }
        guard epoch.firstIndex > known.epochs.last?.firstIndex ?? -1 else {
            return .failure(Problem(text: "it starts before the previous epoch"))
        }
        guard let entry = try await store.ledgerEntries(afterSeq: epoch.firstIndex, limit: 1).first,
              entry.seq == epoch.firstIndex + 1
        else { return .failure(Problem(text: "the log has no entry at that index")) }
        var result = VerifiedLogEntry.verify(entry.jws, keys: keyring.trustedKeys)
        if case .failure(.unknownKeyID) = result {
            // Another daemon's key, endorsed since this one last read the keys.
            try await keyring.refresh()
            result = VerifiedLogEntry.verify(entry.jws, keys: keyring.trustedKeys)
        }
        let verified: VerifiedLogEntry
        switch result {
        case let .success(claims): verified = claims
        case let .failure(error): return .failure(Problem(text: "the entry there does not verify: \(error)"))
        }
        guard let event = verified.event, event.kind == .logEpochStarted, event.detail("origin") == epoch.origin,
              event.detail("previousOrigin") == known.current,
              let foundSize = event.details.first(where: { $0.0 == "foundSize" })?.1.intValue
        else {
            return .failure(Problem(text: "the entry there is not the logEpochStarted event of this origin after \"\(known.current)\""))
        }
        return .success(foundSize)
    }
}
