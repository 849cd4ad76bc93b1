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
