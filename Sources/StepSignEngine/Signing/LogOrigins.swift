import StepSignStorage

/// The origins of the log's epochs (SPEC §5.5): the first one (stored by the first daemon,
/// `ledger.origin` or its default) and one for each `admin.recover` since. The Merkle tree is
/// one tree; a checkpoint of `size` entries carries the origin of the last epoch whose
/// `logEpochStarted` event's index is below `size`.
public struct LogOrigins: Sendable, Equatable {
    /// The log's first origin.
    public var first: String
    /// The epochs after the first, by number.
    public var epochs: [LogEpochRecord]

    public init(first: String, epochs: [LogEpochRecord] = []) {
        self.first = first
        self.epochs = epochs
    }

    /// The origin of new checkpoints.
    public var current: String { epochs.last?.origin ?? first }

    /// Every origin the log has had, oldest first.
    public var all: [String] { [first] + epochs.map(\.origin) }

    /// The origin of a checkpoint of the first `size` entries.
    func origin(forSize size: Int64) -> String {
        epochs.last { $0.firstIndex < size }?.origin ?? first
    }

    /// The next epoch's number and origin: the first origin with `/epoch<n>` appended (the first
    /// epoch is 1, so the first recovery starts `/epoch2`).
    var next: (epoch: Int64, origin: String) {
        let number = Int64(epochs.count) + 2
        return (number, first + "/epoch" + String(number))
    }
}
