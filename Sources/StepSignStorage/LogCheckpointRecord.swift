import Foundation

/// A stored C2SP checkpoint of the log (SPEC §5.5): a signed note of the tree's first `size`
/// entries, as one daemon (`instance`) signed it. Daemons on one PostgreSQL each keep theirs.
public struct LogCheckpointRecord: Sendable, Equatable {
    /// The tree size the note signs.
    public var size: Int64
    /// The instance whose daemon signed it.
    public var instance: String
    /// The signed note, as served and exported.
    public var note: String
    /// When it was made.
    public var createdAt: Date

    public init(size: Int64, instance: String, note: String, createdAt: Date) {
        self.size = size
        self.instance = instance
        self.note = note
        self.createdAt = createdAt
    }
}
