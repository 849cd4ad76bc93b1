/// A consistency proof (SPEC §5.5) read from one snapshot with what a reply needs beside it:
/// ``LedgerStore/ledgerConsistencyRead(from:to:)``.
public struct LedgerConsistencyRead: Sendable, Equatable {
    /// The number of entries in the log.
    public var count: Int64
    /// The root of the tree of the proof's new size.
    public var root: [UInt8]
    /// The proof from the old size to the new one.
    public var hashes: [[UInt8]]
    /// The witnesses' cosignatures stored for the new size (SPEC §5.6).
    public var cosignatures: [LogCosignatureRecord]

    public init(count: Int64, root: [UInt8], hashes: [[UInt8]], cosignatures: [LogCosignatureRecord]) {
        self.count = count
        self.root = root
        self.hashes = hashes
        self.cosignatures = cosignatures
    }
}
