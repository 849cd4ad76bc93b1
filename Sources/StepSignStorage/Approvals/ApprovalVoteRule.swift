import Foundation
import StepSignProtocol

/// The rules of a request's approvals (SPEC §3.4), one place both stores apply inside their
/// transaction, on the request as read and checked there: a request that fails its check, is
/// no longer pending or is past its time takes none; an approver counts once, byte-wise; and
/// the request completes when the distinct approvers who still qualify reach `required`.
public enum ApprovalVoteRule {
    /// What to do with `vote` for `record` at `now`.
    public enum Step: Equatable, Sendable {
        /// Change nothing; answer this.
        case refuse(ApprovalVoteOutcome)
        /// Insert the vote.
        case insert
    }

    public static func step(for vote: ApprovalVote, on record: ApprovalRecord, now: Date) -> Step {
        if let failure = record.sealFailure { return .refuse(.unsound(failure)) }
        guard record.state == .pending else { return .refuse(.notPending(record.state)) }
        guard now < record.expiresAt else { return .refuse(.notPending(.expired)) }
        guard !ScalarText.contains(record.votes.map(\.approver), vote.approver) else { return .refuse(.alreadyApproved) }
        return .insert
    }

    /// What to do when asked to complete `record` (read and checked in the transaction, with
    /// every stored vote row in `storedVoters`) for the qualification of `voters`.
    public enum Completion: Equatable, Sendable {
        /// Change nothing; answer this.
        case refuse(ApprovalCompletion)
        /// Remove the votes of `drop`; then, if `approves`, mark the request approved.
        case apply(drop: [String], approves: Bool)
    }

    public static func completion(of record: ApprovalRecord, storedVoters: [String], voters: [String],
                                  qualified: [String]) -> Completion {
        if let failure = record.sealFailure { return .refuse(.unsound(failure)) }
        guard record.state == .pending else { return .refuse(.notPending(record.state)) }
        guard sameSet(storedVoters, voters) else { return .refuse(.votesChanged(record)) }
        let drop = record.distinctApprovers.filter { !ScalarText.contains(qualified, $0) }
        let kept = record.distinctApprovers.count - drop.count
        return .apply(drop: drop, approves: kept >= record.rule.required)
    }

    /// `record` after the completion step `drop`/`approves` with `signatureID` at `now`: what
    /// the store answers after writing it.
    public static func outcome(of record: ApprovalRecord, dropping drop: [String], approves: Bool, signatureID: String,
                               now: Date) -> ApprovalCompletion {
        var record = record
        record.votes.removeAll { ScalarText.contains(drop, $0.approver) }
        guard approves else { return .waiting(record, dropped: drop) }
        record.state = .approved
        record.signatureID = signatureID
        record.decidedAt = now
        return .approved(record)
    }

    /// Whether `a` and `b` hold the same texts, byte-wise, each as often.
    static func sameSet(_ a: [String], _ b: [String]) -> Bool {
        a.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
            == b.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
    }
}
