import Foundation

/// A witness's stored cosignature (C2SP tlog-cosignature v1, SPEC §5.6) of the log's checkpoint
/// of one size: the signature line as the witness made it, checked against the configured
/// witness key before it is stored. Every daemon's note of a size has the same text, so one
/// cosignature serves them all.
public struct LogCosignatureRecord: Sendable, Equatable {
    /// The tree size of the checkpoint cosigned.
    public var size: Int64
    /// The witness's name (the line's key name).
    public var witness: String
    /// The signature line, `— name base64(key ID ‖ timestamp ‖ signature)`.
    public var line: String
    /// When it was stored.
    public var createdAt: Date

    public init(size: Int64, witness: String, line: String, createdAt: Date) {
        self.size = size
        self.witness = witness
        self.line = line
        self.createdAt = createdAt
    }
}
