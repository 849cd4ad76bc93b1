import Foundation
import StepSignFormat

/// Reads of the ledger that are not the log's own (SPEC §5, §5.3, §5.4): one entry by its
/// signature ID, the count of signatures, a user's events, the JWS checkpoints older ledgers
/// carry, and the audit.
public protocol LedgerLookupStore: Sendable {
    /// Stores a JWS checkpoint (SPEC §5.3; the daemon now makes C2SP ones, a copied or
    /// migrated ledger still carries these), durably.
    func appendCheckpoint(_ checkpoint: LedgerCheckpointRecord) async throws

    /// The stored checkpoints with seq greater than `afterSeq` and at most `throughSeq` (nil:
    /// no upper bound), by seq.
    func ledgerCheckpoints(afterSeq: Int64, throughSeq: Int64?) async throws -> [LedgerCheckpointRecord]

    /// The entry with this signature ID, or nil.
    func ledgerEntry(signatureID: String) async throws -> LedgerEntry?

    /// The number of entries that are signatures: all of them less the events of SPEC §5.4
    /// (rows whose `authLevel` is ``LedgerAppend/eventAuthLevel``, which a partial index
    /// counts), read from one snapshot.
    func ledgerSignatureCount() async throws -> Int64

    /// Up to `limit` events (SPEC §5.4) naming `user` ("" for events that name no user: the
    /// signing keys' and the configuration's) with sequence numbers greater than `afterSeq`,
    /// in order: an index range, however long the ledger.
    func ledgerEvents(user: String, afterSeq: Int64, limit: Int) async throws -> [LedgerEntry]

    /// Runs ``LedgerVerifier`` over the stored checkpoints and the whole ledger in sequence
    /// order, from one read snapshot, one row at a time.
    func auditLedger(options: LedgerVerifier.Options) async throws -> LedgerAudit
}

extension LedgerLookupStore {
    /// Checks the hash chain only.
    public func auditLedger() async throws -> LedgerAudit {
        try await auditLedger(options: LedgerVerifier.Options(trustedKeys: nil))
    }
}
