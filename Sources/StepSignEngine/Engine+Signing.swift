import Logging
import StepSignProtocol
import StepSignConfig
import StepSignCrypto
import StepSignStorage
import struct Foundation.Date
import StepSignMetrics

extension Engine {
    /// `authenticateUserAndSignData` (SPEC §3.2): checks, then one step-up challenge or the result.
    nonisolated(nonsending) func authenticateUserAndSignData(_ parameters: SignDataParameters, session: inout Session, context: RequestContext) async throws -> Reply {
        let payload = parameters.payload, reason = parameters.reason
        let level = parameters.authLevel, type = parameters.authenticatorType
        let payloadLength = try SigningRequest.validate(text: payload, name: "payload", limit: SigningRequest.payloadLimit)
        try SigningRequest.validate(text: reason, name: "reason", limit: SigningRequest.reasonLimit, singleLine: true)
        let user = try await signingUser(named: parameters.user, session: &session, context: context)
        var signing = SigningRequest(user: user, payload: payload, payloadLength: payloadLength, reason: reason,
                                     authLevel: level, authenticatorType: type)
        signing.approvalRule = context.config.approvalRule(reason: reason, level: level)
        let requirement = try signingRequirement(level: level, type: type, context: context)
        if parameters.idempotencyKey != nil, signing.approvalRule != nil {
            throw StepSignError(.notSupported, "\"idempotencyKey\" is not supported for a request that waits for approval "
                                + "([[approval]]); its approvalID is the handle to ask again")
        }
        switch try await claimIdempotencyKey(parameters.idempotencyKey, batch: false, user: user, items: [(payload, reason)],
                                             level: level, type: type, session: session, context: context) {
        case .none: break
        case let .claimed(claim): signing.idempotency = claim
        case let .replay(entries): return try replaySigning(signing, entry: entries[0], session: &session)
        }
        do {
            if requirement == .none {
                return try await finishSigning(signing, authenticatorUsed: "none", session: &session, context: context)
            }
            if let reused = try await signReusingStepUp(signing, session: &session, context: context) { return reused }
            return try await openFirstStepUp(.one(signing), requirement: requirement, session: &session, context: context)
        } catch {
            await releaseIdempotency(signing.idempotency)
            throw error
        }
    }

    /// The user a signing request signs for: the session's login's (the request may only name
    /// it again), or the one it names when the session is not logged in. No authentication
    /// may be open in the session (213).
    nonisolated(nonsending) func signingUser(named: String?, session: inout Session, context: RequestContext) async throws -> String {
        let user: String
        if let login = try await currentLogin(&session, context: context) {
            guard named == nil || named == login.user else {
                throw StepSignError.invalid("\"user\" must be absent or the logged-in user")
            }
            user = login.user
        } else {
            guard let named else { throw StepSignError.invalid("missing parameter \"user\" (the session is not logged in)") }
            try UserName.validate(named)
            user = named
        }
        guard session.pending == nil else {
            throw StepSignError(.authenticationInProgress, "another authentication is already in progress in this session")
        }
        return user
    }

    /// The step-up (level, type) asks for, refused when this configuration cannot give it:
    /// level 0 without `allow_level_0`, level 4 without an IDV issuer (170).
    func signingRequirement(level: Int, type: Int, context: RequestContext) throws -> AuthenticationMatrix.Requirement {
        let requirement = try AuthenticationMatrix.requirement(level: level, type: type)
        switch requirement {
        case .none:
            guard context.config.signing.allowLevel0 else {
                throw StepSignError(.notSupported, "level 0 signing is disabled (signing.allow_level_0)")
            }
        case .idvBiometric:
            guard context.idvKeys != nil else {
                throw StepSignError(.notSupported, "IDV biometric step-up is not configured (idv.issuer)")
            }
        case .strongestEnrolled:
            break
        }
        return requirement
    }

    /// Opens the first step-up challenge of `work` (a blocked user: 148): the user's device
    /// key, else the password, for `.strongestEnrolled`; the IDV server for `.idvBiometric`.
    func openFirstStepUp(_ work: SigningWork, requirement: AuthenticationMatrix.Requirement, session: inout Session,
                         context: RequestContext) async throws -> Reply {
        guard let attemptsLeft = try await credentials.passwords.attemptsLeft(user: work.user, config: context.config, now: context.now) else {
            throw StepSignError(.userBlocked, "the user is blocked")
        }
        let authenticator: any StepUpAuthenticator
        switch requirement {
        case .idvBiometric:
            authenticator = try IDVBiometricStepUp(for: work.subject, peer: session.peer)
        default:
            let device = try await credentials.deviceKeys.challenge(for: work.subject, peer: session.peer, config: context.config)
            authenticator = device.map { DeviceKeyStepUp(challenge: $0) } ?? PasswordStepUp()
        }
        return openStepUp(authenticator, for: work, attemptsLeft: attemptsLeft, session: &session, context: context)
    }

    /// Opens the step-up challenge of `work` with `authenticator` and asks for its answer
    /// (again, with status 102, after a wrong answer).
    private func openStepUp(_ authenticator: any StepUpAuthenticator, for work: SigningWork, attemptsLeft: Int,
                            status: Status = .success, openedAt: Date? = nil, session: inout Session,
                            context: RequestContext) -> Reply {
        session.pending = .signing(SigningChallenge(work: work, authenticator: authenticator, openedAt: openedAt ?? context.now))
        return Reply(events: [authenticator.event(for: work.subject, attemptsLeft: attemptsLeft, status: status)])
    }

    /// The step-up challenge of a signing in `session`, if one is open and `answer` answers
    /// it, with the authenticator that checks the answer.
    func stepUpChallenge(answeredBy answer: StepUpAnswer, in session: Session) -> (SigningChallenge, any StepUpAuthenticator)? {
        guard case let .signing(challenge)? = session.pending,
              let answerer = challenge.authenticator.answerer(for: answer) else { return nil }
        return (challenge, answerer)
    }

    /// An answer to the open step-up of a signing: the transition of the signing flow. The
    /// login that opened the signing must still hold; `answerer` checks the answer with its
    /// attempt reserved first (SPEC §5.1); right signs, wrong asks again with the same or a
    /// fresh challenge, and when no attempt is left the signing ends with 153.
    func answerStepUp(_ answer: StepUpAnswer, to challenge: SigningChallenge, answerer: any StepUpAuthenticator,
                      session: inout Session, context: RequestContext) async throws -> Reply {
        let work = challenge.work
        // A signing opened by a login signs as its user: the login must still hold.
        do { _ = try await currentLogin(&session, context: context) } catch {
            if session.pending == nil { await releaseIdempotency(work.idempotency) }
            throw error
        }
        let outcome = try await answerer.check(answer, for: work.subject, using: credentials.stepUp, context: context)
        StepSignMetric.stepUps.increment(by: 1, [("authenticator", answerer.used), ("outcome", outcome.metricLabel)])
        switch outcome {
        case .accepted:
            session.pending = nil
            switch work {
            case let .one(signing):
                do {
                    return try await finishSigning(signing, authenticatorUsed: answerer.used, steppedUp: true, session: &session,
                                                   context: context)
                } catch {
                    await releaseIdempotency(signing.idempotency)
                    throw error
                }
            case let .batch(batch):
                do {
                    return try await finishBatch(batch, authenticatorUsed: answerer.used, session: &session, context: context)
                } catch {
                    await releaseIdempotency(batch.idempotency)
                    throw error
                }
            case let .approval(decision):
                return try await finishApproval(decision, authenticatorUsed: answerer.used, session: &session, context: context)
            }
        case .passwordMustBeReplaced:
            session.pending = nil
            await releaseIdempotency(work.idempotency)
            logger.info("step-up password must be replaced first", metadata: ["user": "\(work.user)"])
            return Reply(events: [work.unsigned(status: .passwordExpired, authenticatorUsed: answerer.used)])
        case let .rejected(attemptsLeft):
            let fresh = try await answerer.retry(for: work.subject, using: credentials.stepUp, context: context)
            return openStepUp(fresh ?? answerer, for: work, attemptsLeft: attemptsLeft,
                              status: .authenticationFailed(attemptsLeft: attemptsLeft),
                              openedAt: fresh == nil ? challenge.openedAt : nil, session: &session, context: context)
        case .exhausted:
            session.pending = nil
            await releaseIdempotency(work.idempotency)
            logger.warning("step-up attempts exhausted, user blocked", metadata: ["user": "\(work.user)"])
            return Reply(events: [work.unsigned(status: .attemptsExhausted, authenticatorUsed: answerer.used)])
        }
    }

    /// `setLDASignature` (SPEC §3.2): a device key's answer to `getLDASignature`.
    /// A FIDO2 security key's answer carries its `authenticatorData` too (SPEC §5.7).
    func setLDASignature(kid: String, signature: String, authenticatorData: String?, session: inout Session,
                         context: RequestContext) async throws -> Reply {
        let answer = StepUpAnswer.deviceSignature(kid: kid, signature: signature, authenticatorData: authenticatorData)
        switch session.pending {
        case .signing?:
            guard let (challenge, answerer) = stepUpChallenge(answeredBy: answer, in: session) else {
                throw StepSignError.wrongState("the open challenge is not a device key challenge")
            }
            return try await answerStepUp(answer, to: challenge, answerer: answerer, session: &session, context: context)
        case let .loginDeviceSignature(user, device, _)?:
            return try await answerLoginDeviceSignature(signature, kid: kid, user: user, challenge: device,
                                                        session: &session, context: context)
        default:
            throw StepSignError.wrongState("no device key challenge is open")
        }
    }

    /// `setIDVBiometricAssertion` (SPEC §3.2): the IDV server's answer to `getIDVBiometric`.
    func setIDVBiometricAssertion(_ assertion: String, session: inout Session, context: RequestContext) async throws -> Reply {
        let answer = StepUpAnswer.idvAssertion(assertion)
        guard let (challenge, answerer) = stepUpChallenge(answeredBy: answer, in: session) else {
            throw StepSignError.wrongState("no IDV biometric challenge is open")
        }
        return try await answerStepUp(answer, to: challenge, answerer: answerer, session: &session, context: context)
    }

    /// Signs, waits for the durable ledger row, and answers `onAuthenticateUserAndSignData`;
    /// or, for a request an `[[approval]]` rule matches, stores it to wait for its approvers.
    /// `steppedUp`: the user has just stepped up for it, which opens a reuse window when
    /// `[stepup]` allows one; `reusedFrom`: it reused the window of that signature.
    nonisolated(nonsending) func finishSigning(_ signing: SigningRequest, authenticatorUsed: String, steppedUp: Bool = false,
                               reusedFrom: String? = nil, session: inout Session, context: RequestContext) async throws -> Reply {
        if let rule = signing.approvalRule {
            // Not signed yet: the request waits for its approvers (SPEC §3.4).
            return try await requestApproval(signing, rule: rule, authenticatorUsed: authenticatorUsed, session: session,
                                             context: context)
        }
        let details: SigningDetails
        let entry: LedgerEntry
        do {
            (details, entry) = try await self.signing.signer.sign(signing, instance: context.config.instance,
                                                                  authenticatorUsed: authenticatorUsed, peer: session.peer, now: context.now,
                                                                  reusedFrom: reusedFrom,
                                                                  signatureID: signing.idempotency?.signatureIDs.first)
        } catch StorageError.signingKeyRevoked(let kid) {
            // Another daemon revoked this one's key and the keyring made a new one: record it
            // (SPEC §5.4) before the caller's retry is signed with it.
            try? await self.signing.events.recordCreatedKeys(peer: EventRecorder.daemon, instance: context.config.instance, now: context.now)
            throw StorageError.signingKeyRevoked(kid)
        }
        session.signatureIDs.insert(details.dataSignatureID)
        await completeIdempotency(signing.idempotency)
        if let unlock = signing.agentUnlock {
            try await openAgentWindow(signing, seconds: unlock.seconds, maxUses: unlock.maxUses, authenticatorUsed: authenticatorUsed,
                                      signatureID: details.dataSignatureID, peer: session.peer, context: context)
        } else if steppedUp { try await openReuseWindow(signing, authenticatorUsed: authenticatorUsed, signatureID: details.dataSignatureID,
                                                 session: session, context: context) }
        // One audit line per signature behind a step-up (level ≥ 1, human-paced); level 0 logs
        // its line at debug and is counted for the summary line of its minute. Strings are
        // passed as they are (no interpolation copies).
        let level: Logger.Level = signing.authLevel == 0 ? .debug : .notice
        logger.log(level: level, "signed", metadata: [
            "user": .string(signing.user), "signatureID": .string(details.dataSignatureID), "kid": .string(entry.kid),
            "seq": "\(entry.seq)", "authLevel": "\(signing.authLevel)", "authenticatorUsed": .string(authenticatorUsed),
            "peerUID": "\(session.peer.uid)", "peerPID": "\(session.peer.pid)", "peerComm": .string(session.peer.comm),
            "reusedFrom": reusedFrom.map { .string($0) } ?? "",
        ])
        if signing.authLevel == 0 {
            logSummary(self.signing.levelZeroSummary.record(uid: session.peer.uid, comm: session.peer.comm, now: context.now))
        }
        self.signing.signatureCounters.increment(level: signing.authLevel, authenticator: authenticatorUsed)
        return Reply(events: [.onAuthenticateUserAndSignData(details: details, status: .success)])
    }

    /// Signs `signing` in an open step-up reuse window of its user (SPEC §3.4), or returns nil
    /// when there is none for it (then it steps up as usual). On a store shared with other
    /// daemons the user's record is read for its credentials: a change there (a password, an
    /// expiry, a block, a broken seal) ends the window. On SQLite every change goes through
    /// this daemon, whose events end the window at once, so no read is needed (a seal broken
    /// behind its back is found at the next step-up).
    private func signReusingStepUp(_ signing: SigningRequest, session: inout Session, context: RequestContext) async throws -> Reply? {
        let settings = context.config.stepUp
        guard settings.reuseSeconds > 0, credentials.stepUpReuse.count > 0 else { return nil }
        var token: CredentialToken?
        if credentials.store.isShared {
            guard let record = try await credentials.store.user(named: signing.user), record.sealFailure == nil,
                  !record.isBlocked(at: context.now),
                  !record.mustReplacePassword(maxAgeDays: context.config.password.maxAgeDays, at: context.now)
            else { return nil }
            token = record.credentialToken
        }
        guard let window = credentials.stepUpReuse.take(user: signing.user, level: signing.authLevel, type: signing.authenticatorType,
                                                        scope: StepUpReuseWindows.scope(of: session, settings: settings),
                                                        credentialToken: token, now: context.now, settings: settings)
        else { return nil }
        return try await finishSigning(signing, authenticatorUsed: window.authenticatorUsed, reusedFrom: window.signatureID,
                                       session: &session, context: context)
    }

    /// Opens the reuse window of a step-up that just signed `signing`, when `[stepup]` allows
    /// one at its level.
    private func openReuseWindow(_ signing: SigningRequest, authenticatorUsed: String, signatureID: String,
                                 session: Session, context: RequestContext) async throws {
        let settings = context.config.stepUp
        guard settings.reusable(level: signing.authLevel), let record = try await credentials.store.user(named: signing.user) else { return }
        let maxAgeDays = context.config.password.maxAgeDays
        credentials.stepUpReuse.open(StepUpReuseWindows.Window(level: signing.authLevel, type: signing.authenticatorType,
                                                               authenticatorUsed: authenticatorUsed, signatureID: signatureID,
                                                               credentialToken: record.credentialToken,
                                                               passwordExpiresAt: maxAgeDays > 0
                                                       ? record.passwordChangedAt.addingTimeInterval(Double(maxAgeDays) * 86_400) : nil,
                                                   openedAt: context.now,
                                                   seconds: settings.reuseSeconds, maxUses: settings.reuseMaxUses),
                         user: signing.user, scope: StepUpReuseWindows.scope(of: session, settings: settings), settings: settings)
    }
}
