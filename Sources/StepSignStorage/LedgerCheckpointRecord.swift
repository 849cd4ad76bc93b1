import Foundation

/// A stored ledger checkpoint (SPEC §5.3): the daemon's signature over the ledger head.
public struct LedgerCheckpointRecord: Sendable, Equatable {
    /// The sequence number of the entry signed (0: the empty ledger).
    public var seq: Int64
    /// That entry's hash (32 zero bytes for seq 0).
    public var entryHash: [UInt8]
    /// The key that signed it.
    public var kid: String
    /// The checkpoint JWS (`typ` stepsign-checkpoint+jwt).
    public var jws: String
    /// When it was made.
    public var createdAt: Date

    public init(seq: Int64, entryHash: [UInt8], kid: String, jws: String, createdAt: Date) {
        self.seq = seq
        self.entryHash = entryHash
        self.kid = kid
        self.jws = jws
        self.createdAt = createdAt
    }
}
