import StepSignCrypto

// Seals of what approval by several people rests on (SPEC §3.4): a request, each approval of
// it, each group membership. Whoever can write the database but not read the seal key can
// neither change what approvers approve, nor add an approval, nor make someone a member.
extension CredentialSeal {
    /// The seal of a request's fixed fields (not its state, decision or votes).
    package func seal(_ approval: ApprovalRecord) -> [UInt8] {
        var message = SealMessage(domain: "stepsign-approval-seal-v1")
        message.append(approval.id)
        message.append(approval.requester)
        message.append(approval.payload)
        message.append(Int64(approval.payloadLength))
        message.append(approval.reason)
        message.append(Int64(approval.authLevel))
        message.append(Int64(approval.authenticatorType))
        message.append(approval.authenticatorUsed)
        message.append(Int64(approval.peer.uid))
        message.append(Int64(approval.peer.pid))
        message.append(approval.peer.comm)
        message.append(Int64(approval.rule.approvers.count))
        for approver in approval.rule.approvers { message.append(approver) }
        message.append(Int64(approval.rule.required))
        message.append(Int64(approval.rule.level))
        message.append(Int64(approval.rule.type))
        message.append(approval.rule.key)
        message.append(approval.createdAt)
        message.append(approval.expiresAt)
        return mac(message)
    }

    /// The seal of a request's state (SPEC §3.4): its state and decision, every vote stored for
    /// it (`votes`, as stored, whatever their own seals say: so a vote row added, duplicated
    /// or removed behind the daemon's back breaks it), and `eventIndex`, the log index of the
    /// request's latest event when it was sealed (-1: none), so an older copy put back is
    /// told from the current one.
    package func sealState(of approval: ApprovalRecord, votes: [ApprovalVote], eventIndex: Int64) -> [UInt8] {
        var message = SealMessage(domain: "stepsign-approval-state-seal-v1")
        message.append(approval.id)
        message.append(approval.state.rawValue)
        message.append(approval.signatureID != nil)
        message.append(approval.signatureID ?? "")
        message.append(approval.decidedBy != nil)
        message.append(approval.decidedBy ?? "")
        message.append(approval.decisionReason != nil)
        message.append(approval.decisionReason ?? "")
        message.append(approval.decidedAt)
        let sorted = votes.sorted { Array($0.approver.utf8).lexicographicallyPrecedes(Array($1.approver.utf8)) }
        message.append(Int64(sorted.count))
        for vote in sorted {
            message.append(vote.approver)
            message.append(Int64(vote.authLevel))
            message.append(vote.authenticator)
            message.append(vote.at)
        }
        message.append(eventIndex)
        return mac(message)
    }

    /// Why the stored request `approval` may not be acted on, or nil: its fixed fields must
    /// match `seal`; its state, decision and `storedVotes` (every vote row, as stored) must
    /// match `stateSeal` at `eventIndex`; and `eventIndex` must be the request's latest event in
    /// the log (`latestEventIndex`, -1 for none).
    package func failure(of approval: ApprovalRecord, seal: [UInt8]?, stateSeal: [UInt8]?, eventIndex: Int64?,
                         storedVotes: [ApprovalVote], latestEventIndex: Int64) -> SealFailure? {
        guard let seal, let stateSeal, let eventIndex else { return .missing }
        guard ConstantTime.equals(seal, self.seal(approval)),
              ConstantTime.equals(stateSeal, sealState(of: approval, votes: storedVotes, eventIndex: eventIndex)) else {
            return .mismatch
        }
        guard eventIndex == latestEventIndex else { return .rolledBack(recordIndex: eventIndex, latestIndex: latestEventIndex) }
        return nil
    }

    /// The seal of one approval of request `approvalID`.
    package func seal(_ vote: ApprovalVote, approvalID: String) -> [UInt8] {
        var message = SealMessage(domain: "stepsign-approval-vote-seal-v1")
        message.append(approvalID)
        message.append(vote.approver)
        message.append(Int64(vote.authLevel))
        message.append(vote.authenticator)
        message.append(vote.at)
        return mac(message)
    }

    /// The seal of a group membership, bound to the event that added it.
    package func seal(_ member: GroupMember) -> [UInt8] {
        var message = SealMessage(domain: "stepsign-group-member-seal-v1")
        message.append(member.group)
        message.append(member.user)
        message.append(member.addedSeq)
        return mac(message)
    }

    /// Whether `seal` is `expected`, in constant time.
    package func matches(_ seal: [UInt8]?, _ expected: [UInt8]) -> Bool {
        guard let seal else { return false }
        return ConstantTime.equals(seal, expected)
    }
}
