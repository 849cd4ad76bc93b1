import StepSignFormat
import StepSignStorage

/// What `stepsign admin migrate` copied, and how the copy was verified.
public struct MigrationSummary: Sendable, Equatable {
    /// Users copied (with password hashes, counters, blocks, expiry state, credential tokens).
    public var users: Int
    /// Earlier password hashes copied (the reuse rule's history).
    public var passwordHistoryEntries: Int
    /// Device keys copied, revoked ones included.
    public var deviceKeys: Int
    /// Signing key records copied (metadata and what the record holds of the public half).
    public var signingKeys: Int
    /// Ledger entries copied: the source's whole chain.
    public var ledgerEntries: Int64
    /// Checkpoints copied: the log's (C2SP notes, SPEC §5.5) and an older ledger's JWS ones.
    public var checkpoints: Int
    /// The ledger's head, equal in the source and the copy.
    public var head: LedgerHead
    /// Whether the audits checked signatures (every key record had its public half) or the
    /// chain only.
    public var signaturesChecked: Bool
    /// ``LedgerVerifier`` over the source, before the copy.
    public var sourceAudit: LedgerAudit
    /// ``LedgerVerifier`` over the committed copy (``PostgresStore/auditLedger(options:)``):
    /// a faithful copy verifies as ``sourceAudit``.
    public var audit: LedgerAudit

    public init(users: Int, passwordHistoryEntries: Int, deviceKeys: Int, signingKeys: Int, ledgerEntries: Int64,
                checkpoints: Int, head: LedgerHead, signaturesChecked: Bool, sourceAudit: LedgerAudit, audit: LedgerAudit) {
        self.signaturesChecked = signaturesChecked
        self.sourceAudit = sourceAudit
        self.users = users
        self.passwordHistoryEntries = passwordHistoryEntries
        self.deviceKeys = deviceKeys
        self.signingKeys = signingKeys
        self.ledgerEntries = ledgerEntries
        self.checkpoints = checkpoints
        self.head = head
        self.audit = audit
    }
}
