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
    /// Group memberships copied (SPEC §3.4), those in ``unsealedGroupMembers`` included.
    public var groupMembers: Int
    /// Requests for approval copied (SPEC §3.4), whatever their state, those in
    /// ``unsealedApprovals`` included; ``pendingApprovals`` of them pending.
    public var approvals: Int
    public var pendingApprovals: Int
    /// Approvals (votes) of those requests copied.
    public var approvalVotes: Int
    /// `idempotencyKey`s of signing requests copied (SPEC §3), as they were.
    public var idempotencyKeys: Int
    /// Memberships that failed their seal in the source: copied without a seal, so they do not
    /// hold on PostgreSQL either.
    public var unsealedGroupMembers: [GroupMember]
    /// IDs of requests that failed their check in the source: copied without seals, so they are
    /// never acted on on PostgreSQL either.
    public var unsealedApprovals: [String]
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
                checkpoints: Int, groupMembers: Int = 0, approvals: Int = 0, pendingApprovals: Int = 0, approvalVotes: Int = 0,
                idempotencyKeys: Int = 0, unsealedGroupMembers: [GroupMember] = [], unsealedApprovals: [String] = [],
                head: LedgerHead, signaturesChecked: Bool, sourceAudit: LedgerAudit, audit: LedgerAudit) {
        self.groupMembers = groupMembers
        self.approvals = approvals
        self.pendingApprovals = pendingApprovals
        self.approvalVotes = approvalVotes
        self.idempotencyKeys = idempotencyKeys
        self.unsealedGroupMembers = unsealedGroupMembers
        self.unsealedApprovals = unsealedApprovals
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
