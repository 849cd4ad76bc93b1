import Foundation

/// The rule of adding an approval (SPEC §3.4), one place both stores apply inside their
/// transaction, on the request as read there with its sealed approvals: a request no longer
/// pending or past its time takes none, an approver counts once, and the approval that makes
/// `required` completes it.
public enum ApprovalVoteRule {
    /// What to do with `vote` for `record` at `now`.
    public enum Step: Equatable, Sendable {
        /// Change nothing; answer this.
        case refuse(ApprovalVoteOutcome)
        /// Insert the vote; then, if `completes`, mark the request approved.
        case insert(completes: Bool)
    }

    public static func step(for vote: ApprovalVote, on record: ApprovalRecord, now: Date) -> Step {
        guard record.state == .pending else { return .refuse(.notPending(record.state)) }
        guard now < record.expiresAt else { return .refuse(.notPending(.expired)) }
        guard !record.votes.contains(where: { $0.approver == vote.approver }) else { return .refuse(.alreadyApproved) }
        return .insert(completes: record.votes.count + 1 >= record.rule.required)
    }

    /// `record` with `vote` counted, approved with `signatureID` if it `completes`: what the
    /// store answers after writing it.
    public static func outcome(of record: ApprovalRecord, adding vote: ApprovalVote, completes: Bool, signatureID: String,
                               now: Date) -> ApprovalVoteOutcome {
        var record = record
        record.votes.append(vote)
        guard completes else { return .counted(record) }
        record.state = .approved
        record.signatureID = signatureID
        record.decidedAt = now
        return .complete(record)
    }
}
