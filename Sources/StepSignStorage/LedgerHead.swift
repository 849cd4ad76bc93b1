/// The ledger's last entry: its sequence number and hash.
public struct LedgerHead: Sendable, Equatable {
    public var seq: Int64
    public var entryHash: [UInt8]

    public init(seq: Int64, entryHash: [UInt8]) {
        self.seq = seq
        self.entryHash = entryHash
    }
}
