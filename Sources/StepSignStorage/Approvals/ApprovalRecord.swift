import Foundation
import StepSignProtocol

/// A signing request waiting for approval by several people (SPEC §3.4), as the store keeps
/// it: the request exactly as the requester's step-up approved it, the rule it waits on, its
/// state and the approvals counted so far.
///
/// Two seals (SPEC §3.4, "Approvals that cannot be bent"), checked whenever it is read: the
/// request's fixed fields, sealed when it is made, so whoever can write the database cannot
/// change what the approvers are shown and approve; and its state, decision and every stored
/// vote with the log index of the request's latest event, sealed again at every change, so
/// that no vote can be added or duplicated, no state edited, and no older copy put back (a
/// denied request revived) without the check failing. A record whose check fails carries
/// ``sealFailure`` and is never acted on.
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
    /// Why the stored request may not be acted on (its seals, or its binding to the log), or
    /// nil when it checks. Set by the store on every read; not stored.
    public var sealFailure: SealFailure?

    public init(id: String, requester: String, payload: String, payloadLength: Int, reason: String, authLevel: Int,
                authenticatorType: Int, authenticatorUsed: String, peer: LedgerPeer, rule: ApprovalRuleSnapshot,
                createdAt: Date, expiresAt: Date, state: ApprovalState = .pending, signatureID: String? = nil,
                decidedBy: String? = nil, decisionReason: String? = nil, decidedAt: Date? = nil, votes: [ApprovalVote] = [],
                sealFailure: SealFailure? = nil) {
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
        self.sealFailure = sealFailure
    }

    /// The distinct approvers of the counted votes, compared byte-wise (SPEC §3): what a
    /// request's approvals count.
    public var distinctApprovers: [String] {
        var seen = Set<[UInt8]>()
        return votes.map(\.approver).filter { seen.insert(Array($0.utf8)).inserted }
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
    public var users: [String] { approvers.filter { !ScalarText.hasPrefix($0, "group:") } }

    /// The names of the `group:NAME` approvers.
    public var groups: [String] {
        approvers.compactMap { ScalarText.hasPrefix($0, "group:") ? String(decoding: $0.utf8.dropFirst(6), as: UTF8.self) : nil }
    }

    /// Whether `user` is named as an approver, byte-wise (SPEC §3): an NFD twin of a named user
    /// is not that user.
    public func names(user: String) -> Bool { ScalarText.contains(users, user) }

    /// Whether the group `group` is named as approvers, byte-wise.
    public func names(group: String) -> Bool { ScalarText.contains(groups, group) }
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

/// What adding an approval did (``ApprovalStore/addApprovalVote(id:vote:now:)``).
public enum ApprovalVoteOutcome: Sendable, Equatable {
    /// Counted (whether the request is complete is decided by
    /// ``ApprovalStore/completeApproval(id:voters:qualified:reserving:now:)``). The record as it is now.
    case counted(ApprovalRecord)
    /// This approver had approved already: nothing changed.
    case alreadyApproved
    /// It was no longer pending (or its time had run out): nothing changed.
    case notPending(ApprovalState)
    /// No such approval.
    case unknown
    /// The stored request fails its check (SPEC §3.4): never acted on.
    case unsound(SealFailure)
}

/// What checking a request's approvals for completion did
/// (``ApprovalStore/completeApproval(id:voters:qualified:reserving:now:)``).
public enum ApprovalCompletion: Sendable, Equatable {
    /// The qualified approvals reached `required`: the request is now `approved` with the
    /// reserved signature ID (its votes: those counted), and the caller signs it.
    case approved(ApprovalRecord)
    /// Not enough qualified approvals: it waits for more. `dropped`: the approvers whose votes
    /// no longer qualified and were removed.
    case waiting(ApprovalRecord, dropped: [String])
    /// The votes are not the ones the qualification was made for (another approval arrived in
    /// between): nothing changed; qualify the record given and ask again.
    case votesChanged(ApprovalRecord)
    /// It was no longer pending: nothing changed.
    case notPending(ApprovalState)
    /// No such approval.
    case unknown
    /// The stored request fails its check: never acted on.
    case unsound(SealFailure)
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
