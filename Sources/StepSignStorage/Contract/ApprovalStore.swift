import Foundation

/// Requests that wait for approval by several people, and the user groups approver lists name
/// (SPEC §3.4), kept where every connection and daemon on the store sees them, so a request
/// made on one daemon is approved on another and survives a restart. Every transition is one
/// atomic step of the store: an approver counts once, an approval completes once, a request
/// is denied or expires once. Each transition checks the request's seals and its binding to the
/// log first and seals it again after (``CredentialSeal/sealState(of:votes:eventIndex:)``); the
/// ledger append that records a request's event binds the request to it in the same
/// transaction (``LedgerAppend/approvalID``).
public protocol ApprovalStore: Sendable {
    // MARK: Approvals

    /// Stores a new pending request, sealed.
    func createApproval(_ record: ApprovalRecord) async throws

    /// The request `id` with its approvals whose seals check, and ``ApprovalRecord/sealFailure``
    /// set when the stored request fails its check (then it is never acted on); nil when there
    /// is none.
    func approval(id: String) async throws -> ApprovalRecord?

    /// The pending requests, oldest first, each with its check (``ApprovalRecord/sealFailure``).
    func pendingApprovals() async throws -> [ApprovalRecord]

    /// Every stored request, oldest first, each with its check: what `admin.auditVerify` reads.
    func allApprovals() async throws -> [ApprovalRecord]

    /// Adds `vote` to the pending request `id` in one step: refused when the request fails its
    /// check, is not pending or its time is over at `now`, or when the approver (byte-wise)
    /// approved it before. Never completes the request:
    /// ``completeApproval(id:voters:qualified:reserving:now:)`` does.
    func addApprovalVote(id: String, vote: ApprovalVote, now: Date) async throws -> ApprovalVoteOutcome

    /// Decides, in one step, whether the pending request `id` is approved (SPEC §3.4): when its
    /// stored voters are exactly `voters` (byte-wise; else ``ApprovalCompletion/votesChanged(_:)``,
    /// nothing changed), the votes of voters not in `qualified` are removed, and if the distinct
    /// voters left reach `required` the request becomes `approved` with `signatureID` reserved.
    func completeApproval(id: String, voters: [String], qualified: [String], reserving signatureID: String,
                          now: Date) async throws -> ApprovalCompletion

    /// Ends the pending request `id` as `state` (`denied` or `expired`), by `by` for `reason`;
    /// false (nothing changed) when it was not pending. Throws
    /// ``StorageError/approvalSealBroken(id:_:)`` for a request that fails its check.
    func endApproval(id: String, as state: ApprovalState, by: String?, reason: String, now: Date) async throws -> Bool

    /// The requests still pending whose time is over at `now`, each ended as `expired` in the
    /// same step (so each is reported by one daemon once). Requests that fail their check are
    /// left as they are.
    func expireApprovals(now: Date) async throws -> [ApprovalRecord]

    /// Records that the approved request `id` was signed as `signatureID`; false when it was
    /// not `approved` (marked signed already). Throws ``StorageError/approvalSealBroken(id:_:)``
    /// for a request that fails its check.
    func markApprovalSigned(id: String, signatureID: String) async throws -> Bool

    // MARK: Groups

    /// Adds `user` to `group`, bound to the log index of the event that records it.
    func addGroupMember(_ member: GroupMember) async throws

    /// Removes `user` from `group`; false when they were not a member.
    func removeGroupMember(group: String, user: String) async throws -> Bool

    /// Every membership whose seal checks, by group then user.
    func groupMembers() async throws -> [GroupMember]
}
