import Logging
import StepSignConfig
import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import StepSignStorage
import struct Foundation.Date
import StepSignMetrics

/// Approval by several people (SPEC §3.4): a request an `[[approval]]` rule matches waits,
/// after its requester's step-up, for `required` approvers other than the requester, each
/// counted once and each behind a step-up bound to the request's digest; then it is signed
/// (claims `approvals`). A denial or the timeout ends it (121, 122). Every step is a log event.
extension Engine {
    /// Pending requests one requester may have at once: each notifies its approvers, so a
    /// requester cannot flood them (then 14).
    static let maxPendingApprovalsPerRequester = 32

    /// How long an approved request may wait for the daemon that approved it to sign before
    /// `getApproval` signs it instead (that daemon stopped in between).
    static let unfinishedApprovalSeconds: Double = 30

    /// Why a request ended when a reload removed or changed the rule it waited on.
    static let ruleGoneReason = "its [[approval]] rule was removed or changed by a reload"

    /// The requester has stepped up for `signing`, which `rule` matches: store the request,
    /// record it, tell the approvers, and answer `onApprovalPending`. Nothing is signed yet.
    func requestApproval(_ signing: SigningRequest, rule: StepSignConfiguration.ApprovalRule, authenticatorUsed: String,
                         session: Session, context: RequestContext) async throws -> Reply {
        let waiting = try await approvals.store.pendingApprovals().filter { ScalarText.equal($0.requester, signing.user) && $0.expiresAt > context.now }
        guard waiting.count < Self.maxPendingApprovalsPerRequester else {
            throw StepSignError(.busy, "\(signing.user) has \(waiting.count) requests waiting for approval; wait for them first")
        }
        let milliseconds = UInt64(max(0, context.now.timeIntervalSince1970 * 1000))
        let record = ApprovalRecord(
            id: try UUIDv7.generate(unixMilliseconds: milliseconds), requester: signing.user, payload: signing.payload,
            payloadLength: signing.payloadLength, reason: signing.reason, authLevel: signing.authLevel,
            authenticatorType: signing.authenticatorType, authenticatorUsed: authenticatorUsed,
            peer: LedgerPeer(uid: session.peer.uid, pid: session.peer.pid, comm: session.peer.comm),
            rule: Self.snapshot(rule), createdAt: context.now,
            expiresAt: context.now.addingTimeInterval(Double(rule.timeoutSeconds)))
        try await approvals.store.createApproval(record)
        try await recordEvent(.approvalRequested, user: signing.user, details: [
            ("approvalID", .string(record.id)), ("digest", .string(Hex.encode(ApprovalDecision.digest(of: record)))),
            ("payloadSHA256", .string(Hex.encode(SHA256.hash(Array(record.payload.utf8))))), ("reason", .string(record.reason)),
            ("required", .int(Int64(rule.required))), ("approvers", .array(rule.approvers.map { .string($0) })),
        ], context: context)
        logger.notice("approval requested", metadata: [
            "approvalID": .string(record.id), "user": .string(record.requester), "required": "\(rule.required)",
            "peerUID": "\(session.peer.uid)", "peerComm": .string(session.peer.comm),
        ])
        await notifyApprovers(of: record, context: context)
        return Reply(events: [.onApprovalPending(approvalID: record.id, required: rule.required, approvers: rule.approvers,
                                                 expiresAt: RFC3339Timestamp.string(record.expiresAt))])
    }

    /// `listApprovals`: the pending requests the session's user may answer (not their own,
    /// not one they approved already), with what an approver needs to see before the step-up.
    func listApprovals(session: inout Session, context: RequestContext) async throws -> Reply {
        guard let login = try await currentLogin(&session, context: context) else {
            throw StepSignError.wrongState("log in to see the requests you may approve")
        }
        var rows: [JSONValue] = []
        for record in try await approvals.store.pendingApprovals() where record.expiresAt > context.now {
            guard sound(record), !ScalarText.equal(record.requester, login.user),
                  !ScalarText.contains(record.votes.map(\.approver), login.user),
                  try await isApprover(login.user, of: record) else { continue }
            rows.append(Self.describe(record))
        }
        return Reply(result: ["approvals": .array(rows)])
    }

    /// `approveRequest` / `denyRequest`: checks that the session's user may answer the request
    /// now, then opens the step-up at the rule's level whose challenge names its digest.
    func answerApproval(_ approvalID: String, kind: ApprovalDecision.Kind, session: inout Session,
                        context: RequestContext) async throws -> Reply {
        guard let login = try await currentLogin(&session, context: context) else {
            throw StepSignError.wrongState("log in to answer a request for approval")
        }
        if case let .deny(reason) = kind {
            try SigningRequest.validate(text: reason, name: "reason", limit: SigningRequest.reasonLimit, singleLine: true)
        }
        guard session.pending == nil else {
            throw StepSignError(.authenticationInProgress, "another authentication is already in progress in this session")
        }
        let record = try await answerableRequest(approvalID, by: login.user, kind: kind, context: context)
        let requirement = try signingRequirement(level: record.rule.level, type: record.rule.type, context: context)
        return try await openFirstStepUp(.approval(ApprovalDecision(approver: login.user, kind: kind, request: record)),
                                         requirement: requirement, session: &session, context: context)
    }

    /// The request `approvalID` if `user` may answer it now; else the reason as an error: 4
    /// for an unknown request or one `user` is no approver of (alike), 13 for the requester's
    /// own, 11 for one no longer pending (ending it first if its time or its rule is gone) or
    /// already approved by `user`.
    private func answerableRequest(_ approvalID: String, by user: String, kind: ApprovalDecision.Kind,
                                   context: RequestContext) async throws -> ApprovalRecord {
        guard let record = try await approvals.store.approval(id: approvalID) else {
            throw StepSignError.invalid("no request for approval \(approvalID) that you may answer")
        }
        try requireSound(record)
        guard !ScalarText.equal(record.requester, user) else {
            throw StepSignError(.permissionDenied, "the requester's own approval never counts")
        }
        guard try await isApprover(user, of: record) else {
            throw StepSignError.invalid("no request for approval \(approvalID) that you may answer")
        }
        if let ended = try await endIfOver(record, context: context) {
            throw StepSignError.wrongState("the request is no longer pending: \(ended.state.rawValue)")
        }
        guard record.state == .pending else {
            throw StepSignError.wrongState("the request is no longer pending: \(record.state.rawValue)")
        }
        if case .approve = kind, ScalarText.contains(record.votes.map(\.approver), user) {
            throw StepSignError.wrongState("you approved this request already; each approver counts once")
        }
        return record
    }

    /// The approver's step-up succeeded: count the approval (once, atomically) or deny, record
    /// it, and sign when the approvals are complete.
    func finishApproval(_ decision: ApprovalDecision, authenticatorUsed: String, session: inout Session,
                        context: RequestContext) async throws -> Reply {
        // What may have changed during the step-up: the request, the rule, the membership.
        let record = try await answerableRequest(decision.request.id, by: decision.approver, kind: decision.kind, context: context)
        let digest = Hex.encode(ApprovalDecision.digest(of: record))
        guard digest == Hex.encode(ApprovalDecision.digest(of: decision.request)) else {
            throw StepSignError.wrongState("the request changed while you stepped up; look at it again")
        }
        switch decision.kind {
        case let .deny(reason):
            guard try await approvals.store.endApproval(id: record.id, as: .denied, by: decision.approver, reason: reason, now: context.now) else {
                throw StepSignError.wrongState("the request is no longer pending")
            }
            try await recordEvent(.approvalDenied, user: decision.approver, details: [
                ("approvalID", .string(record.id)), ("digest", .string(digest)), ("requester", .string(record.requester)),
                ("reason", .string(reason)), ("authenticator", .string(authenticatorUsed)),
            ], context: context)
            logger.notice("approval denied", metadata: ["approvalID": .string(record.id), "approver": .string(decision.approver)])
            return Reply(events: [.onApprovalResponse(approvalID: record.id, decision: decision.name, state: ApprovalState.denied.rawValue,
                                                      approvals: record.votes.count, required: record.rule.required, status: .success)])
        case .approve:
            let vote = ApprovalVote(approver: decision.approver, authLevel: record.rule.level, authenticator: authenticatorUsed,
                                    at: context.now)
            let counted: ApprovalRecord
            switch try await approvals.store.addApprovalVote(id: record.id, vote: vote, now: context.now) {
            case let .counted(now): counted = now
            case .alreadyApproved: throw StepSignError.wrongState("you approved this request already; each approver counts once")
            case let .notPending(state): throw StepSignError.wrongState("the request is no longer pending: \(state.rawValue)")
            case .unknown: throw StepSignError.invalid("no request for approval \(record.id) that you may answer")
            case let .unsound(failure): throw unsoundError(record.id, failure)
            }
            try await recordEvent(.approvalGranted, user: decision.approver, details: [
                ("approvalID", .string(record.id)), ("digest", .string(digest)), ("requester", .string(record.requester)),
                ("authenticator", .string(authenticatorUsed)), ("approvals", .int(Int64(counted.distinctApprovers.count))),
                ("required", .int(Int64(counted.rule.required))),
            ], context: context)
            logger.notice("approval granted", metadata: [
                "approvalID": .string(record.id), "approver": .string(decision.approver),
                "approvals": "\(counted.distinctApprovers.count)", "required": "\(counted.rule.required)",
            ])
            let (now, state) = try await completeIfApproved(counted, context: context)
            return Reply(events: [.onApprovalResponse(approvalID: record.id, decision: decision.name, state: state.rawValue,
                                                      approvals: now.distinctApprovers.count, required: now.rule.required,
                                                      status: .success)])
        }
    }

    /// Once `record` has as many distinct approvers as its rule requires, asks the store to
    /// complete it with the approvers who still qualify now (SPEC §3.4: each still a user, not
    /// blocked, still named by the rule or still in its group); the votes of the others are
    /// dropped and the request waits for more. Signs it when it is approved. Returns the
    /// request as it then stands and its state.
    func completeIfApproved(_ record: ApprovalRecord, context: RequestContext) async throws -> (ApprovalRecord, ApprovalState) {
        var record = record
        // Another approval arriving in between makes the store refuse the qualification it was
        // not made for; each round reads the votes again, and one of the racing approvers sees
        // them all.
        for _ in 0..<Self.completionRounds {
            guard record.distinctApprovers.count >= record.rule.required else { return (record, .pending) }
            var qualified: [String] = []
            for voter in record.distinctApprovers where try await qualifies(voter, toApprove: record, at: context.now) {
                qualified.append(voter)
            }
            let reserved = try UUIDv7.generate(unixMilliseconds: UInt64(max(0, context.now.timeIntervalSince1970 * 1000)))
            switch try await approvals.store.completeApproval(id: record.id, voters: record.votes.map(\.approver),
                                                              qualified: qualified, reserving: reserved, now: context.now) {
            case let .approved(approved):
                _ = try await signApproved(approved, context: context)
                return (approved, .signed)
            case let .waiting(waiting, dropped):
                for approver in dropped {
                    logger.warning("an approval no longer qualifies and was dropped; the request waits for another", metadata: [
                        "approvalID": .string(record.id), "approver": .string(approver),
                    ])
                }
                return (waiting, .pending)
            case let .votesChanged(now):
                record = now
            case let .notPending(state):
                return (record, state)
            case .unknown:
                throw StepSignError.invalid("no request for approval \(record.id)")
            case let .unsound(failure):
                throw unsoundError(record.id, failure)
            }
        }
        throw StepSignError(.busy, "approvals of this request kept arriving while they were counted; ask for it again")
    }

    /// How many times ``completeIfApproved(_:context:)`` counts again when approvals race.
    static let completionRounds = 16

    /// Whether `user`'s approval of `record` counts now: a user whose record checks, not
    /// blocked, not the requester, and an approver of the request's rule.
    func qualifies(_ user: String, toApprove record: ApprovalRecord, at now: Date) async throws -> Bool {
        guard !ScalarText.equal(user, record.requester),
              let stored = try await credentials.store.user(named: user),
              ScalarText.equal(stored.name, user) else { return false }
        if let failure = stored.sealFailure {
            credentials.sealAlarm.report(user: user, failure)
            return false
        }
        guard !stored.isBlocked(at: now) else { return false }
        return try await isApprover(user, of: record)
    }

    /// Whether `record` checks; a request that does not is reported once and never acted on.
    func sound(_ record: ApprovalRecord) -> Bool {
        guard let failure = record.sealFailure else { return true }
        credentials.sealAlarm.report(approval: record.id, failure)
        return false
    }

    /// Throws ``unsoundError(_:_:)`` for a request that does not check.
    func requireSound(_ record: ApprovalRecord) throws {
        if let failure = record.sealFailure { throw unsoundError(record.id, failure) }
    }

    /// The refusal of acting on request `id`, whose stored record fails its check: reported once
    /// at critical; error 11.
    func unsoundError(_ id: String, _ failure: SealFailure) -> StepSignError {
        credentials.sealAlarm.report(approval: id, failure)
        return StepSignError.wrongState(
            "the stored request for approval \(id) failed its integrity check (\(failure.name)) and is not acted on; admin.auditVerify lists it")
    }

    /// Signs the approved `record` as its requester asked, with the reserved signature ID, so
    /// that a second attempt (a restart between approval and signature) finds the first in the
    /// ledger instead of signing twice. Returns the signature's details.
    func signApproved(_ record: ApprovalRecord, context: RequestContext) async throws -> SigningDetails {
        try requireSound(record)
        guard record.state == .approved || record.state == .signed, let signatureID = record.signatureID,
              record.distinctApprovers.count >= record.rule.required else {
            throw StepSignError.internalError("the request is not approved")
        }
        let signing = SigningRequest(user: record.requester, payload: record.payload, payloadLength: record.payloadLength,
                                     reason: record.reason, authLevel: record.authLevel, authenticatorType: record.authenticatorType)
        let peer = Peer(uid: record.peer.uid, gid: record.peer.uid, pid: record.peer.pid, comm: record.peer.comm, groups: [])
        let distinct = record.distinctApprovers
        let claims = distinct.compactMap { approver in record.votes.first { ScalarText.equal($0.approver, approver) } }.map {
            ApprovalClaim(user: $0.approver, authLevel: $0.authLevel, authenticator: $0.authenticator,
                          at: Int64($0.at.timeIntervalSince1970))
        }
        var details: SigningDetails
        do {
            (details, _) = try await self.signing.signer.sign(signing, instance: context.config.instance, authenticatorUsed: record.authenticatorUsed,
                                                              peer: peer, now: context.now, signatureID: signatureID, approvals: claims)
        } catch StorageError.duplicateSignatureID {
            // Signed before (by another daemon, or before a restart): that signature stands.
            guard let existing = try await approvedSignature(record) else { throw StorageError.duplicateSignatureID(signatureID) }
            details = existing
        }
        // The one that marks it signed records the event: once, whoever signed.
        if try await approvals.store.markApprovalSigned(id: record.id, signatureID: signatureID) {
            try await self.signing.events.record(.approvalSigned, user: record.requester,
                                                 details: [("approvalID", .string(record.id)), ("signatureID", .string(signatureID))],
                                                 peer: EventRecorder.daemon, instance: context.config.instance, now: context.now)
        }
        self.signing.signatureCounters.increment(level: record.authLevel, authenticator: "approval")
        logger.notice("signed", metadata: [
            "user": .string(record.requester), "signatureID": .string(signatureID), "approvalID": .string(record.id),
            "approvals": "\(distinct.count)", "authLevel": "\(record.authLevel)",
            "peerUID": "\(record.peer.uid)", "peerPID": "\(record.peer.pid)", "peerComm": .string(record.peer.comm),
        ])
        return details
    }

    /// The details of the signature of an approved request, read from the ledger; nil when it
    /// is not there.
    private func approvedSignature(_ record: ApprovalRecord) async throws -> SigningDetails? {
        guard let signatureID = record.signatureID, let entry = try await signing.store.ledgerEntry(signatureID: signatureID) else { return nil }
        let claims = try? StepSignSignature.verify(entry.jws, trustedKeys: signing.keyring.trustedKeys)
        var details = SigningDetails(dataPayload: record.payload, dataPayloadLength: record.payloadLength, reason: record.reason,
                                     payloadSignature: entry.jws, dataSignatureID: signatureID, authLevel: record.authLevel,
                                     authenticatorType: record.authenticatorType,
                                     authenticatorUsed: claims?.authenticatorUsed ?? record.authenticatorUsed)
        details.logIndex = entry.seq - 1
        return details
    }

    /// `getApproval`: where a request stands, for its requester (the user, or the peer uid
    /// that asked), its approvers, or an admin; waiting up to `waitSeconds` for it to leave
    /// `pending`. A signed request answers `onAuthenticateUserAndSignData` with the signature,
    /// a denied one with status 121, an expired one 122.
    func getApproval(_ approvalID: String, waitSeconds: Int, session: inout Session, context: RequestContext) async throws -> Reply {
        let login = try await currentLogin(&session, context: context)
        guard var record = try await approvals.store.approval(id: approvalID) else {
            throw StepSignError.invalid("no request for approval \(approvalID) that you may see")
        }
        var mayRead = session.isAdmin || session.peer.uid == record.peer.uid || login.map { ScalarText.equal($0.user, record.requester) } == true
        if !mayRead, let login { mayRead = try await isApprover(login.user, of: record) }
        guard mayRead else { throw StepSignError.invalid("no request for approval \(approvalID) that you may see") }
        // The wait is in real time, whatever time the request is handled at.
        let deadline = Date().addingTimeInterval(Double(waitSeconds))
        while true {
            try requireSound(record)
            record = try await endIfOver(record, context: context) ?? record
            if record.state == .approved, let approvedAt = record.decidedAt,
               Date().timeIntervalSince(approvedAt) > Self.unfinishedApprovalSeconds {
                // Approved long ago but not signed: the daemon that counted the last approval
                // stopped before it signed. The reserved ID makes this sign once.
                _ = try await signApproved(record, context: context)
                record = try await approvals.store.approval(id: approvalID) ?? record
            }
            guard record.state == .pending || record.state == .approved, Date() < deadline, !Task.isCancelled,
                  !approvals.waitsEnded.load(ordering: .relaxed) else { break }
            try? await Task.sleep(for: .milliseconds(200))
            record = try await approvals.store.approval(id: approvalID) ?? record
        }
        return try await approvalReply(record)
    }

    /// The reply of `getApproval` for `record` as it stands.
    private func approvalReply(_ record: ApprovalRecord) async throws -> Reply {
        var result = Self.describe(record).members ?? []
        result.append(("state", .string(record.state.rawValue)))
        if let signatureID = record.signatureID, record.state == .signed { result.append(("signatureID", .string(signatureID))) }
        if let reason = record.decisionReason { result.append(("decisionReason", .string(reason))) }
        if let by = record.decidedBy { result.append(("decidedBy", .string(by))) }
        let unsigned = SigningDetails(dataPayload: record.payload, dataPayloadLength: record.payloadLength, reason: record.reason,
                                      payloadSignature: "", dataSignatureID: "", authLevel: record.authLevel,
                                      authenticatorType: record.authenticatorType, authenticatorUsed: record.authenticatorUsed)
        var events: [Event] = []
        switch record.state {
        case .signed:
            if let details = try await approvedSignature(record) {
                events.append(.onAuthenticateUserAndSignData(details: details, status: .success))
            }
        case .denied:
            events.append(.onAuthenticateUserAndSignData(details: unsigned, status: .approvalDenied(record.decisionReason ?? "denied")))
        case .expired:
            events.append(.onAuthenticateUserAndSignData(details: unsigned, status: .approvalExpired(record.decisionReason ?? "timeout")))
        case .pending, .approved:
            break
        }
        return Reply(events: events, result: .object(result))
    }

    /// Ends `record` as expired if its time is over, or if no `[[approval]]` rule in force is
    /// the one it waits on (a reload removed or changed it), recording the event; returns it
    /// as ended, or nil when it goes on (or was not pending).
    private func endIfOver(_ record: ApprovalRecord, context: RequestContext) async throws -> ApprovalRecord? {
        guard record.state == .pending, record.sealFailure == nil else { return nil }
        let reason: String
        if record.expiresAt <= context.now {
            reason = "timeout"
        } else if !context.config.approvals.contains(where: { Self.snapshot($0).key == record.rule.key }) {
            reason = Self.ruleGoneReason
        } else {
            return nil
        }
        if try await approvals.store.endApproval(id: record.id, as: .expired, by: nil, reason: reason, now: context.now) {
            try await recordExpiry(record, reason: reason, config: context.config, now: context.now)
        }
        var ended = try await approvals.store.approval(id: record.id) ?? record
        if ended.state == .pending { ended.state = .expired }
        return ended
    }

    /// Ends the requests whose time is over, or whose rule a reload removed, each recorded once
    /// (`approvalExpired`); the daemon calls it every few seconds.
    public func expireApprovals(now: Date = Date()) async {
        let config = settings.config
        do {
            for record in try await approvals.store.expireApprovals(now: now) {
                try await recordExpiry(record, reason: "timeout", config: config, now: now)
            }
            let keys = Set(config.approvals.map { Self.snapshot($0).key })
            for record in try await approvals.store.pendingApprovals() where sound(record) && !keys.contains(record.rule.key) {
                if try await approvals.store.endApproval(id: record.id, as: .expired, by: nil, reason: Self.ruleGoneReason, now: now) {
                    try await recordExpiry(record, reason: Self.ruleGoneReason, config: config, now: now)
                }
            }
        } catch is CancellationError {
            // The daemon is stopping mid-sweep; the next start sweeps again.
        } catch {
            logger.error("could not end requests for approval that are over", metadata: ["error": "\(error)"])
        }
    }

    private func recordExpiry(_ record: ApprovalRecord, reason: String, config: StepSignConfiguration, now: Date) async throws {
        try await signing.events.record(.approvalExpired, user: record.requester,
                                        details: [("approvalID", .string(record.id)), ("reason", .string(reason))],
                                        peer: EventRecorder.daemon, instance: config.instance, now: now)
        logger.notice("approval expired", metadata: ["approvalID": .string(record.id), "reason": .string(reason)])
    }

    /// Whether `user` is one of `record`'s approvers: named in its rule, or a member of a group
    /// it names whose membership holds (``groupMembershipHolds(_:)``).
    func isApprover(_ user: String, of record: ApprovalRecord) async throws -> Bool {
        if record.rule.names(user: user) { return true }
        guard !record.rule.groups.isEmpty else { return false }
        for member in try await approvals.store.groupMembers()
        where ScalarText.equal(member.user, user) && record.rule.names(group: member.group) {
            if try await groupMembershipHolds(member) { return true }
        }
        return false
    }

    /// The members of the groups `rule` names whose membership holds, and the users it names.
    func approverUsers(of rule: ApprovalRuleSnapshot) async throws -> [String] {
        var users = rule.users
        if !rule.groups.isEmpty {
            for member in try await approvals.store.groupMembers()
            where rule.names(group: member.group) && !ScalarText.contains(users, member.user) {
                if try await groupMembershipHolds(member) { users.append(member.user) }
            }
        }
        return users
    }

    /// Whether a stored (sealed) membership holds in the log: the event it is bound to is the
    /// `groupMemberAdded` of this group and user, and no later event of the user removed them
    /// from it, or removed the user. So neither a row put back after a removal nor a user added
    /// again under a removed member's name is a member.
    func groupMembershipHolds(_ member: GroupMember) async throws -> Bool {
        let verifiers = signing.keyring.trustedKeys
        var after = member.addedSeq - 1
        var sawAdded = false
        while true {
            let page = try await signing.store.ledgerEvents(user: member.user, afterSeq: after, limit: 256)
            for entry in page {
                guard let event = try? LedgerEvent.verify(entry.jws, trustedKeys: verifiers).event else { continue }
                if entry.seq == member.addedSeq {
                    guard event.kind == .groupMemberAdded, let group = event.detail("group"), ScalarText.equal(group, member.group),
                          let named = event.user, ScalarText.equal(named, member.user) else { return false }
                    sawAdded = true
                } else if event.kind == .userRemoved
                            || (event.kind == .groupMemberRemoved && event.detail("group").map { ScalarText.equal($0, member.group) } == true) {
                    return false
                }
            }
            guard let last = page.last, page.count == 256 else { break }
            after = last.seq
        }
        return sawAdded
    }

    /// Tells each approver (not the requester) through the notifier; a failed delivery is
    /// logged, and the request stands (`listApprovals` shows it).
    private func notifyApprovers(of record: ApprovalRecord, context: RequestContext) async {
        let notifier = CodeNotifierFactory.make(config: context.config, stateDirectory: context.config.server.stateDir)
        do {
            for user in try await approverUsers(of: record.rule) where !ScalarText.equal(user, record.requester) {
                do {
                    try await notifier.deliver(ApprovalNotice(user: user, request: record))
                } catch {
                    logger.warning("could not notify an approver", metadata: [
                        "approvalID": .string(record.id), "approver": .string(user), "error": "\(error)",
                    ])
                }
            }
        } catch {
            logger.warning("could not list the approvers to notify", metadata: ["approvalID": .string(record.id), "error": "\(error)"])
        }
    }

    /// The rule as a request stores it; its key names every setting, so a reload that changes
    /// any of them ends the requests that waited on the old one.
    static func snapshot(_ rule: StepSignConfiguration.ApprovalRule) -> ApprovalRuleSnapshot {
        let key = [
            "reason_prefix=\(rule.reasonPrefix)", "min_level=\(rule.minLevel.map(String.init) ?? "")",
            "approvers=\(rule.approvers.joined(separator: ","))", "required=\(rule.required)", "level=\(rule.level)",
            "type=\(rule.type)", "timeout_seconds=\(rule.timeoutSeconds)",
        ].joined(separator: "\n")
        return ApprovalRuleSnapshot(approvers: rule.approvers, required: rule.required, level: rule.level, type: rule.type,
                                    key: Hex.encode(SHA256.hash(Array(key.utf8))))
    }

    /// A request as `listApprovals` and `getApproval` show it.
    static func describe(_ record: ApprovalRecord) -> JSONValue {
        .object([
            ("approvalID", .string(record.id)), ("requester", .string(record.requester)), ("payload", .string(record.payload)),
            ("payloadSHA256", .string(Hex.encode(SHA256.hash(Array(record.payload.utf8))))), ("reason", .string(record.reason)),
            ("authLevel", .int(Int64(record.authLevel))), ("authenticatorType", .int(Int64(record.authenticatorType))),
            ("peer", .object([("uid", .int(Int64(record.peer.uid))), ("pid", .int(Int64(record.peer.pid))),
                              ("comm", .string(record.peer.comm))])),
            ("createdAt", .string(RFC3339Timestamp.string(record.createdAt))),
            ("expiresAt", .string(RFC3339Timestamp.string(record.expiresAt))),
            ("required", .int(Int64(record.rule.required))), ("approvers", .array(record.rule.approvers.map { .string($0) })),
            ("approvals", .array(record.votes.map {
                .object([("user", .string($0.approver)), ("authLevel", .int(Int64($0.authLevel))),
                         ("authenticator", .string($0.authenticator)), ("at", .string(RFC3339Timestamp.string($0.at)))])
            })),
            ("level", .int(Int64(record.rule.level))), ("type", .int(Int64(record.rule.type))),
            ("digest", .string(Hex.encode(ApprovalDecision.digest(of: record)))),
        ])
    }
}
