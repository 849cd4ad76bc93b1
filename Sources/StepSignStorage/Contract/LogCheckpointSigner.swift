/// Signs the log's checkpoints inside the transaction that appends the entries they cover
/// (SPEC §5.3, §5.5): the engine's side of ``LedgerStore/appendLedger(_:checkpoints:)``.
///
/// At every tree size that is a multiple of ``every`` the store asks for the size of the last
/// checkpoint the signer keeps (``keptSize()``), reads the consistency proof from it to the new
/// size in the transaction, and hands both to ``sign(size:root:from:proof:)``; the record it
/// returns is stored in the same transaction, so no crash and no reader ever sees such an entry
/// without its checkpoint.
public protocol LogCheckpointSigner: Sendable {
    /// A checkpoint is made of every tree size that is a multiple of this (above 0).
    var every: Int { get }

    /// The size of the last checkpoint signed, which the proof given to `sign` must start from;
    /// nil when none was.
    func keptSize() -> Int64?

    /// Signs the checkpoint of the first `size` entries, whose root is `root`, once `proof`
    /// (the consistency proof from `fromSize`, what ``keptSize()`` answered, to `size`) proves
    /// that the log extends the kept checkpoint. `epochs` is the number of log epochs stored
    /// (``LedgerStore/logEpochs()``, read in the transaction): the origin a checkpoint names
    /// depends on them. Nil when another checkpoint was kept since ``keptSize()`` answered: the
    /// store reads a proof from that one and asks again. Throws when the log does not extend
    /// the kept checkpoint, or when the signer has not taken the stored epochs yet (the
    /// transaction is rolled back).
    func sign(size: Int64, root: [UInt8], from fromSize: Int64?, proof: [[UInt8]], epochs: Int) throws -> LogCheckpointRecord?
}

extension LogCheckpointSigner {
    /// How many times a store asks again when checkpoints are kept between its proof and the
    /// signing (each time another one: a few at most, as they are made one at a time).
    public var signingAttemptsLimit: Int { 8 }
}
