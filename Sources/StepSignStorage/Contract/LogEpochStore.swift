import Foundation

/// The log's origin and its epochs (SPEC §5.5, `admin.recover`): stored once per log and per
/// recovery, read by the daemons that sign its checkpoints.
public protocol LogEpochStore: Sendable {
    /// The log's origin (SPEC §5.5): the one stored, or `origin` when none was, stored now
    /// (the first daemon's). One step: two daemons starting at once store one of theirs.
    func claimLogOrigin(_ origin: String) async throws -> String

    /// The log's stored origin, or nil when no daemon has stored one yet.
    func logOrigin() async throws -> String?

    /// The log's epochs after its first (SPEC §5.5, `admin.recover`), by epoch.
    func logEpochs() async throws -> [LogEpochRecord]

    /// Stores a new epoch, durably; throws ``StorageError/conflict(_:)`` when an epoch of that
    /// number or origin is stored already (two recoveries at once store one).
    func addLogEpoch(_ epoch: LogEpochRecord) async throws
}
