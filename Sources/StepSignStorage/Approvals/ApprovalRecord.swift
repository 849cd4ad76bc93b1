import Foundation

/// A signing request waiting for approval by several people (SPEC §3.4), as the store keeps
/// it: the request exactly as the requester's step-up approved it, the rule it waits on, its
/// state and the approvals counted so far.
///
/// The request's fields (everything but the state, its decision and the votes) are sealed
/// when the record is created and checked whenever it is read (``ApprovalSeal``), so whoever
/// can write the database cannot change what the approvers are shown and approve; each vote
/// is sealed too, so none can be added behind the daemon's back.
public struct ApprovalRecord: Sendable, Equatable {
    public var id: String
    public var requester: String
    public var payload: String
    public var payloadLength: Int
    public var reason: String
    public var authLevel: Int
    public var authenticatorType: Int
    /// What authenticated the requester.
    public var authenticatorUsed: String
    public var peer: LedgerPeer
    /// The rule it waits on, as it was when the request was made.
    public var rule: ApprovalRuleSnapshot
    public var createdAt: Date
    public var expiresAt: Date
    public var state: ApprovalState
    /// The signature ID reserved when the approvals were complete (`approved`), and then the
    /// signature's (`signed`).
    public var signatureID: String?
    /// Who denied it, or nil.
    public var decidedBy: String?
    /// The denial's reason, or why it ended otherwise.
    public var decisionReason: String?
    public var decidedAt: Date?
    /// The approvals counted: those whose seal checks, in the order they were given.
    public var votes: [ApprovalVote]

    public init(id: String, requester: String, payload: String, payloadLength: Int, reason: String, authLevel: Int,
                authenticatorType: Int, authenticatorUsed: String, peer: LedgerPeer, rule: ApprovalRuleSnapshot,
                createdAt: Date, expiresAt: Date, state: ApprovalState = .pending, signatureID: String? = nil,
                decidedBy: String? = nil, decisionReason: String? = nil, decidedAt: Date? = nil, votes: [ApprovalVote] = []) {
        self.id = id
        self.requester = requester
        self.payload = payload
        self.payloadLength = payloadLength
        self.reason = reason
        self.authLevel = authLevel
        self.authenticatorType = authenticatorType
        self.authenticatorUsed = authenticatorUsed
        self.peer = peer
        self.rule = rule
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.state = state
        self.signatureID = signatureID
        self.decidedBy = decidedBy
        self.decisionReason = decisionReason
        self.decidedAt = decidedAt
        self.votes = votes
    }
}

/// Where an approval stands.
public enum ApprovalState: String, Sendable, Equatable {
    /// Waiting for approvals.
    case pending
    /// Approved by enough approvers; its signature is being made.
    case approved
    /// Signed: ``ApprovalRecord/signatureID`` names the signature.
    case signed
    /// An approver denied it (121).
    case denied
    /// Its time ran out, or the rule it waited on was removed (122).
    case expired
}

/// The `[[approval]]` rule a request waits on, as it was when the request was made.
public struct ApprovalRuleSnapshot: Sendable, Equatable {
    /// User IDs and `group:NAME`s.
    public var approvers: [String]
    public var required: Int
    /// The step-up each approver answers.
    public var level: Int
    public var type: Int
    /// What identifies the rule in the configuration: a reload that removes or changes the
    /// rule ends the requests waiting on it (docs/decisions.md).
    public var key: String

    public init(approvers: [String], required: Int, level: Int, type: Int, key: String) {
        self.approvers = approvers
        self.required = required
        self.level = level
        self.type = type
        self.key = key
    }

    /// The user IDs among the approvers.
    public var users: [String] { approvers.filter { !$0.hasPrefix("group:") } }

    /// The names of the `group:NAME` approvers.
    public var groups: Set<String> {
        Set(approvers.compactMap { $0.hasPrefix("group:") ? String($0.dropFirst(6)) : nil })
    }
}

/// One approver's approval: who, with which step-up, when.
public struct ApprovalVote: Sendable, Equatable {
    public var approver: String
    public var authLevel: Int
    public var authenticator: String
    public var at: Date

    public init(approver: String, authLevel: Int, authenticator: String, at: Date) {
        self.approver = approver
        self.authLevel = authLevel
        self.authenticator = authenticator
        self.at = at
    }
}

/// What adding an approval did (``ApprovalStore/addApprovalVote(id:vote:reserving:now:)``).
public enum ApprovalVoteOutcome: Sendable, Equatable {
    /// Counted; more are needed. The record as it is now.
    case counted(ApprovalRecord)
    /// Counted, and it completed the approvals: the record is now `approved` with the reserved
    /// signature ID, and the caller signs it.
    case complete(ApprovalRecord)
    /// This approver had approved already: nothing changed.
    case alreadyApproved
    /// It was no longer pending (or its time had run out): nothing changed.
    case notPending(ApprovalState)
    /// No such approval (or one that fails its seal check).
    case unknown
}

/// A member of a stepsign user group (SPEC §3.4), with the log index of the event that added
/// them, which its seal binds.
public struct GroupMember: Sendable, Equatable {
    public var group: String
    public var user: String
    /// The ledger seq of the `groupMemberAdded` event.
    public var addedSeq: Int64

    public init(group: String, user: String, addedSeq: Int64) {
        self.group = group
        self.user = user
        self.addedSeq = addedSeq
    }
}
