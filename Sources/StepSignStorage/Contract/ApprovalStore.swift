import Foundation

/// Requests that wait for approval by several people, and the user groups approver lists name
/// (SPEC §3.4), kept where every connection and daemon on the store sees them, so a request
/// made on one daemon is approved on another and survives a restart. Every transition is one
/// atomic step of the store: an approver counts once, an approval completes once, a request
/// is denied or expires once.
public protocol ApprovalStore: Sendable {
    // MARK: Approvals

    /// Stores a new pending request, sealed.
    func createApproval(_ record: ApprovalRecord) async throws

    /// The request `id` with its approvals whose seals check; nil when there is none, or its
    /// seal does not check (it is then never shown nor signed).
    func approval(id: String) async throws -> ApprovalRecord?

    /// The pending requests, oldest first (sealed ones only).
    func pendingApprovals() async throws -> [ApprovalRecord]

    /// Adds `vote` to the pending request `id` in one step: refused when it is not pending or
    /// its time is over at `now`, or when the approver approved it before; when it makes
    /// `required` approvals, the request becomes `approved` with `signatureID` reserved.
    func addApprovalVote(id: String, vote: ApprovalVote, reserving signatureID: String, now: Date) async throws -> ApprovalVoteOutcome

    /// Ends the pending request `id` as `state` (`denied` or `expired`), by `by` for `reason`;
    /// false (nothing changed) when it was not pending.
    func endApproval(id: String, as state: ApprovalState, by: String?, reason: String, now: Date) async throws -> Bool

    /// The requests still pending whose time is over at `now`, each ended as `expired` in the
    /// same step (so each is reported by one daemon once).
    func expireApprovals(now: Date) async throws -> [ApprovalRecord]

    /// Records that the approved request `id` was signed as `signatureID`; false when it was
    /// not `approved` (marked signed already).
    func markApprovalSigned(id: String, signatureID: String) async throws -> Bool

    // MARK: Groups

    /// Adds `user` to `group`, bound to the log index of the event that records it.
    func addGroupMember(_ member: GroupMember) async throws

    /// Removes `user` from `group`; false when they were not a member.
    func removeGroupMember(group: String, user: String) async throws -> Bool

    /// Every membership whose seal checks, by group then user.
    func groupMembers() async throws -> [GroupMember]
}
