import Foundation

/// A log epoch started by `admin.recover` (SPEC §5.5): after a restore that lost entries, the
/// log goes on under a new origin, from the `logEpochStarted` event at `firstIndex`. The tree
/// is one tree; checkpoints of sizes up to `firstIndex` carry the previous epoch's origin,
/// larger ones this epoch's. Stored append-only, one row per epoch; the signed event in the
/// ledger is the evidence, this row the index to it.
public struct LogEpochRecord: Sendable, Equatable {
    /// The epoch's number: 2 for the first recovery (the log's first origin is epoch 1).
    public var epoch: Int64
    /// The origin of the epoch's checkpoints.
    public var origin: String
    /// The log index of the `logEpochStarted` event that starts it.
    public var firstIndex: Int64
    /// When it was started.
    public var createdAt: Date

    public init(epoch: Int64, origin: String, firstIndex: Int64, createdAt: Date) {
        self.epoch = epoch
        self.origin = origin
        self.firstIndex = firstIndex
        self.createdAt = createdAt
    }
}
