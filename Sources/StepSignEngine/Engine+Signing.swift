import Logging
import StepSignProtocol
import StepSignConfig
import StepSignCrypto
import StepSignStorage
import struct Foundation.Date

extension Engine {
    /// `authenticateUserAndSignData` (SPEC §3.2): checks, then one step-up challenge or the result.
    func authenticateUserAndSignData(_ parameters: SignDataParameters, session: inout Session, context: RequestContext) async throws -> Reply {
        let payload = parameters.payload, reason = parameters.reason, named = parameters.user
        let level = parameters.authLevel, type = parameters.authenticatorType
        let payloadLength = try SigningRequest.validate(text: payload, name: "payload", limit: SigningRequest.payloadLimit)
        try SigningRequest.validate(text: reason, name: "reason", limit: SigningRequest.reasonLimit, singleLine: true)
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
        let signing = SigningRequest(user: user, payload: payload, payloadLength: payloadLength, reason: reason,
                                     authLevel: level, authenticatorType: type)

        switch try AuthenticationMatrix.requirement(level: level, type: type) {
        case .none:
            guard context.config.signing.allowLevel0 else {
                throw StepSignError(.notSupported, "level 0 signing is disabled (signing.allow_level_0)")
            }
            return try await finishSigning(signing, authenticatorUsed: "none", session: &session, context: context)
        case .strongestEnrolled:
            guard let attemptsLeft = try await passwords.attemptsLeft(user: user, config: context.config, now: context.now) else {
                throw StepSignError(.userBlocked, "the user is blocked")
            }
            let device = try await deviceChallenge(user: user, payload: payload, reason: reason, peer: session.peer, config: context.config)
            return openStepUp(device.map { .deviceKey($0) } ?? .password, for: signing, attemptsLeft: attemptsLeft,
                              session: &session, context: context)
        case .idvBiometric:
            guard context.idvKeys != nil else {
                throw StepSignError(.notSupported, "IDV biometric step-up is not configured (idv.issuer)")
            }
            guard let attemptsLeft = try await passwords.attemptsLeft(user: user, config: context.config, now: context.now) else {
                throw StepSignError(.userBlocked, "the user is blocked")
            }
            return openStepUp(.idvBiometric(try idvChallenge(for: signing, peer: session.peer)), for: signing,
                              attemptsLeft: attemptsLeft, session: &session, context: context)
        }
    }

    /// Opens (or, after a wrong answer, reopens) the step-up challenge of `signing` with
    /// `authenticator` and asks for its answer.
    private func openStepUp(_ authenticator: StepUpAuthenticator, for signing: SigningRequest, attemptsLeft: Int,
                            status: Status = .success, session: inout Session, context: RequestContext) -> Reply {
        session.pending = .signing(SigningChallenge(request: signing, authenticator: authenticator, openedAt: context.now))
        return Reply(events: [authenticator.stepUpEvent(user: signing.user, attemptsLeft: attemptsLeft, status: status)])
    }

    /// `setLDASignature` (SPEC §3.2): a device key's answer to `getLDASignature`.
    func setLDASignature(kid: String, signature: String, session: inout Session, context: RequestContext) async throws -> Reply {
        switch session.pending {
        case let .signing(challenge)?:
            guard case let .deviceKey(device) = challenge.authenticator else {
                throw StepSignError.wrongState("the open challenge is not a device key challenge")
            }
            guard context.config.lda.enabled else { throw StepSignError(.notSupported, "device keys are disabled (lda.enabled)") }
            let user = challenge.request.user
            return try await answerStepUp(challenge, session: &session, context: context) {
                guard try await self.isValidDeviceSignature(signature, kid: kid, challenge: device, user: user, config: context.config),
                      try await self.store.useOnce("lda-nonce:" + device.nonce, expiresAt: self.challengeExpiry(context), now: context.now)
                else { return "device signature rejected (key \(kid))" }
                return nil
            }
        case let .loginDeviceSignature(user, device, _)?:
            return try await answerLoginDeviceSignature(signature, kid: kid, user: user, challenge: device,
                                                        session: &session, context: context)
        default:
            throw StepSignError.wrongState("no device key challenge is open")
        }
    }

    /// Until when a nonce of a challenge opened `now` must stay used: past that the challenge
    /// has expired anyway.
    func challengeExpiry(_ context: RequestContext) -> Date {
        context.now.addingTimeInterval(Double(context.config.server.challengeTimeoutSeconds) + 60)
    }

    /// `setIDVBiometricAssertion` (SPEC §3.2): the IDV server's answer to `getIDVBiometric`.
    func setIDVBiometricAssertion(_ assertion: String, session: inout Session, context: RequestContext) async throws -> Reply {
        guard case let .signing(challenge)? = session.pending, case let .idvBiometric(idv) = challenge.authenticator else {
            throw StepSignError.wrongState("no IDV biometric challenge is open")
        }
        guard let keys = context.idvKeys else { throw StepSignError(.notSupported, "IDV biometric step-up is not configured (idv.issuer)") }
        let user = challenge.request.user
        return try await answerStepUp(challenge, session: &session, context: context) {
            try await self.checkIDVAssertion(assertion, keys: keys, user: user, challenge: idv, context: context)
                .map { "IDV assertion rejected (\($0.rawValue))" }
        }
    }

    /// A device or IDV answer to the open signing challenge, as SPEC §5.1 orders it: the login
    /// that opened it must still hold, an attempt is reserved before the answer is looked at
    /// (`check` runs only when one was granted and returns why it refuses, or nil), a right
    /// answer gives the attempt back and signs, a wrong one asks again or ends with 153.
    private func answerStepUp(_ challenge: SigningChallenge, session: inout Session, context: RequestContext,
                              check: () async throws -> String?) async throws -> Reply {
        // A signing opened by a login signs as its user: the login must still hold.
        _ = try await currentLogin(&session, context: context)
        let signing = challenge.request
        let reservation = try await passwords.reserve(user: signing.user, config: context.config, now: context.now)
        let refusal: String? = if case .granted = reservation { try await check() } else { "no attempt left" }
        guard let refusal else {
            try await passwords.giveBack(user: signing.user, now: context.now)
            session.pending = nil
            return try await finishSigning(signing, authenticatorUsed: challenge.authenticator.used, session: &session, context: context)
        }
        logger.info("step-up answer rejected", metadata: ["user": "\(signing.user)", "reason": "\(refusal)"])
        return try await failStepUp(challenge, reservation: reservation, session: &session, context: context)
    }

    /// A new IDV challenge for `signing` asked by `peer`: a fresh nonce and the operation text.
    private func idvChallenge(for signing: SigningRequest, peer: Peer) throws -> IDVChallenge {
        let nonce = Base64URL.encode(try SecureRandom.bytes(count: 16))
        return IDVChallenge(nonce: nonce, text: IDVChallengeText.bytes(nonce: nonce, user: signing.user, payload: signing.payload,
                                                                      reason: signing.reason, peer: peer))
    }

    /// Why `assertion` does not approve `challenge` (the signing for `user`), or nil when it
    /// does (and it is now used up, on every connection and daemon sharing the store).
    private func checkIDVAssertion(_ assertion: String, keys: TrustedKeys, user: String, challenge: IDVChallenge,
                                   context: RequestContext) async throws -> IDVAssertionVerifier.Rejection? {
        let nonce = challenge.nonce
        let use: IDVAssertionVerifier.SingleUse
        do {
            use = try idvVerifier.verify(assertion, issuer: context.config.idv.issuer, keys: keys,
                                         maxAgeSeconds: context.config.idv.maxAgeSeconds, user: user, challenge: challenge, now: context.now)
        } catch {
            return error
        }
        // The IDV server vouches for a person; stepsign signs only for its own users.
        guard try await store.user(named: user) != nil else { return .unknownUser }
        guard try await store.useOnce(use.value, expiresAt: use.expiresAt, now: context.now),
              try await store.useOnce("idv-nonce:" + nonce, expiresAt: challengeExpiry(context), now: context.now)
        else { return .replayed }
        return nil
    }

    /// A failed device or IDV answer, its attempt already taken: asks again with a fresh
    /// challenge of the same authenticator (a new nonce, so an answer to the old one cannot be
    /// replayed; the password when no device key is left) or, when no attempt is left, ends the
    /// signing with 153.
    private func failStepUp(_ challenge: SigningChallenge, reservation: AttemptReservation, session: inout Session,
                            context: RequestContext) async throws -> Reply {
        let signing = challenge.request
        switch PasswordAuthenticator.failure(reservation) {
        case let .rejected(attemptsLeft):
            let fresh: StepUpAuthenticator
            switch challenge.authenticator {
            case .deviceKey:
                // No device key left (all revoked meanwhile): fall back to the password.
                fresh = try await deviceChallenge(user: signing.user, payload: signing.payload, reason: signing.reason,
                                                  peer: session.peer, config: context.config).map { .deviceKey($0) } ?? .password
            case .idvBiometric:
                fresh = .idvBiometric(try idvChallenge(for: signing, peer: session.peer))
            case .password:
                fresh = .password
            }
            return openStepUp(fresh, for: signing, attemptsLeft: attemptsLeft, status: .authenticationFailed(attemptsLeft: attemptsLeft),
                              session: &session, context: context)
        case .exhausted, .accepted:
            session.pending = nil
            logger.warning("step-up attempts exhausted, user blocked", metadata: ["user": "\(signing.user)"])
            return Reply(events: [
                .onAuthenticateUserAndSignData(details: signing.details(authenticatorUsed: challenge.authenticator.used),
                                               status: .attemptsExhausted),
            ])
        }
    }

    /// `setPassword` mode 12: the password step-up of a signing.
    func answerSigningPassword(_ password: String, challenge: SigningChallenge, session: inout Session,
                               context: RequestContext) async throws -> Reply {
        let signing = challenge.request
        switch try await passwords.verify(user: signing.user, password: password, uid: session.peer.uid, config: context.config, now: context.now) {
        case .accepted:
            session.pending = nil
            // Only a password change may use a password that must be replaced: 118, nothing
            // signed. The right answer has given its attempt back already.
            if try await mustReplacePassword(user: signing.user, context: context) {
                logger.info("step-up password must be replaced first", metadata: ["user": "\(signing.user)"])
                return Reply(events: [
                    .onAuthenticateUserAndSignData(details: signing.details(authenticatorUsed: "password"), status: .passwordExpired),
                ])
            }
            return try await finishSigning(signing, authenticatorUsed: "password", session: &session, context: context)
        case let .rejected(attemptsLeft):
            logger.info("step-up password rejected", metadata: ["user": "\(signing.user)", "attemptsLeft": "\(attemptsLeft)"])
            session.pending = .signing(SigningChallenge(request: signing, authenticator: .password, openedAt: challenge.openedAt))
            return Reply(events: [
                .getPassword(user: signing.user, challengeMode: .stepUpForSigning, attemptsLeft: attemptsLeft,
                             status: .authenticationFailed(attemptsLeft: attemptsLeft), info: []),
            ])
        case .exhausted:
            session.pending = nil
            logger.warning("step-up attempts exhausted, user blocked", metadata: ["user": "\(signing.user)"])
            return Reply(events: [
                .onAuthenticateUserAndSignData(details: signing.details(authenticatorUsed: "password"), status: .attemptsExhausted),
            ])
        }
    }

    /// Signs, waits for the durable ledger row, and answers `onAuthenticateUserAndSignData`.
    private func finishSigning(_ signing: SigningRequest, authenticatorUsed: String, session: inout Session, context: RequestContext) async throws -> Reply {
        let (details, entry) = try await signer.sign(signing, instance: context.config.instance,
                                                     authenticatorUsed: authenticatorUsed, peer: session.peer, now: context.now)
        session.signatureIDs.insert(details.dataSignatureID)
        // One audit line per signature behind a step-up (level ≥ 1, human-paced); level 0 logs
        // its line at debug and is counted for the summary line of its minute. Strings are
        // passed as they are (no interpolation copies).
        let level: Logger.Level = signing.authLevel == 0 ? .debug : .notice
        logger.log(level: level, "signed", metadata: [
            "user": .string(signing.user), "signatureID": .string(details.dataSignatureID), "kid": .string(entry.kid),
            "seq": "\(entry.seq)", "authLevel": "\(signing.authLevel)", "authenticatorUsed": .string(authenticatorUsed),
            "peerUID": "\(session.peer.uid)", "peerPID": "\(session.peer.pid)", "peerComm": .string(session.peer.comm),
        ])
        if signing.authLevel == 0 {
            logSummary(levelZeroSummary.record(uid: session.peer.uid, comm: session.peer.comm, now: context.now))
        }
        return Reply(events: [.onAuthenticateUserAndSignData(details: details, status: .success)])
    }
}
