/// An entry found by its signature ID, read with its inclusion proof (SPEC §5.5) from one
/// snapshot: ``LedgerStore/ledgerInclusionRead(signatureID:treeSize:)``.
public struct LedgerInclusionRead: Sendable {
    /// The proof of the entry in the tree of `treeSize` entries, and the witnesses'
    /// cosignatures stored for that size (SPEC §5.6).
    public struct Proof: Sendable, Equatable {
        public var treeSize: Int64
        public var hashes: [[UInt8]]
        public var cosignatures: [LogCosignatureRecord]

        public init(treeSize: Int64, hashes: [[UInt8]], cosignatures: [LogCosignatureRecord]) {
            self.treeSize = treeSize
            self.hashes = hashes
            self.cosignatures = cosignatures
        }
    }

    public var entry: LedgerEntry
    /// Nil when the caller named no tree size for this entry.
    public var proof: Proof?

    public init(entry: LedgerEntry, proof: Proof?) {
        self.entry = entry
        self.proof = proof
    }
}
