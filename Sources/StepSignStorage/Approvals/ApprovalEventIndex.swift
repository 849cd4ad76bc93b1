/// One row of the log's index of events that name a request for approval (SPEC §3.4,
/// `approval_events`): a request's state seal is bound to the latest of its events.
public struct ApprovalEventIndex: Sendable, Equatable {
    public var approvalID: String
    /// The event's ledger seq.
    public var seq: Int64

    public init(approvalID: String, seq: Int64) {
        self.approvalID = approvalID
        self.seq = seq
    }
}
