import NIOPosix
import StepSignProtocol
import StepSignConfig
import StepSignCrypto
import StepSignStorage
import struct Foundation.Date

extension Engine {
    /// `forgotPassword` (SPEC §3.2): only from an open mode-0 challenge of that user, and only
    /// when `forgot_password.enabled`; otherwise error 170. At most
    /// `forgot_password.max_codes_per_hour` codes per name and hour (then error 14).
    func forgotPassword(_ user: String, session: inout Session, context: RequestContext) async throws -> Reply {
        try UserName.validate(user)
        guard context.config.forgotPassword.enabled else {
            throw StepSignError(.notSupported, "forgot password is disabled (forgot_password.enabled)")
        }
        guard case let .password(challenge)? = session.pending, challenge.mode == .verify, challenge.user == user else {
            throw StepSignError(.notSupported, "forgotPassword is only available from the mode-0 password challenge of that user")
        }
        let (verificationKey, failures) = try await issueActivationCode(user: user, peer: session.peer, context: context)
        session.pending = .activationCode(ActivationChallenge(user: user, verificationKey: verificationKey, openedAt: context.now))
        return Reply(events: [
            .getActivationCode(user: user, verificationKey: verificationKey,
                               attemptsLeft: max(0, context.config.forgotPassword.maxAttempts - failures), status: .success),
        ])
    }

    /// `resendActivationCode`: a new code and verification key; the old code stops working.
    /// Wrong codes so far still count, and so does this code against the hourly budget.
    func resendActivationCode(session: inout Session, context: RequestContext) async throws -> Reply {
        guard case var .activationCode(challenge)? = session.pending else {
            throw StepSignError.wrongState("no activation code challenge is open")
        }
        let (verificationKey, failures) = try await issueActivationCode(user: challenge.user, peer: session.peer,
                                                                         context: context)
        challenge.verificationKey = verificationKey
        session.pending = .activationCode(challenge)
        return Reply(events: [
            .getActivationCode(user: challenge.user, verificationKey: challenge.verificationKey,
                               attemptsLeft: max(0, context.config.forgotPassword.maxAttempts - failures), status: .success),
        ])
    }

    /// `setActivationCode`: a right code leads to a new password (Path B, mode 1), or to the
    /// device key's consent (Path A). Reserve, then check, then consume (SPEC §5.1).
    func setActivationCode(_ typed: String, session: inout Session, context: RequestContext) async throws -> Reply {
        guard case let .activationCode(challenge)? = session.pending else {
            throw StepSignError.wrongState("no activation code challenge is open")
        }
        let user = challenge.user
        let accepted = try await credentials.passwords.checks.withSlot(uid: session.peer.uid, limit: context.config.password.maxChecksPerUID) { slot in
            let reservation = try await credentials.store.reserveActivationAttempt(name: user, maxAttempts: context.config.forgotPassword.maxAttempts,
                                                                                   now: context.now)
            guard case .granted = reservation else { return (false, reservation) }
            let record = try await credentials.store.activationCode(user: user)
            let encoded = record?.codeHash ?? credentials.passwords.configuredDummy
            let matches = try await slot.run { try ActivationCode.matches(typed, hash: encoded) }
            guard let record, matches else { return (false, reservation) }
            return (try await credentials.store.consumeActivationCode(user: user, codeHash: record.codeHash, now: context.now), reservation)
        }
        if accepted.0 {
            logger.notice("activation code accepted", metadata: ["user": "\(user)"])
            if try await !credentials.deviceKeys.activeIDs(user: user, config: context.config).isEmpty {
                session.pending = .ldaConsent(user: user, openedAt: context.now)
                return Reply(events: [.getUserConsentForLDA(user: user, challengeMode: .set)])
            }
            return Reply(events: [askForNewPassword(user: user, session: &session, context: context)])
        }
        guard case let .granted(attemptsLeft) = accepted.1, attemptsLeft > 0 else {
            logger.info("activation code rejected, no attempt left", metadata: ["user": "\(user)"])
            // The wrong answer that took the budget's last attempt removes the code (fail
            // closed). An answer that found no attempt left leaves it: the attempts may be
            // held by answers still being checked, on this daemon or another, and one of them
            // may be right (SPEC §5.1); the last of them removes it if it is wrong.
            if case .granted = accepted.1 { try await credentials.store.deleteActivationCode(user: user) }
            session.pending = nil
            return Reply(events: [
                .getActivationCode(user: user, verificationKey: challenge.verificationKey, attemptsLeft: 0,
                                   status: .activationAttemptsExhausted),
                .getUser,
            ])
        }
        logger.info("activation code rejected", metadata: ["user": "\(user)", "attemptsLeft": "\(attemptsLeft)"])
        return Reply(events: [
            .getActivationCode(user: user, verificationKey: challenge.verificationKey, attemptsLeft: attemptsLeft,
                               status: .invalidActivationCode(attemptsLeft: attemptsLeft)),
        ])
    }

    /// Path B: opens the mode-1 challenge for a new password.
    private func askForNewPassword(user: String, session: inout Session, context: RequestContext) -> Event {
        session.pending = .password(PasswordChallenge(user: user, mode: .set, openedAt: context.now))
        return .getPassword(user: user, challengeMode: .set, attemptsLeft: context.config.password.maxAttempts, status: .success,
                            info: policyInfo(context.config))
    }

    /// `setUserConsentForLDA` (Path A): yes → the device signs a login challenge; no → Path B.
    func setUserConsentForLDA(_ consent: Bool, session: inout Session, context: RequestContext) async throws -> Reply {
        guard case let .ldaConsent(user, _)? = session.pending else {
            throw StepSignError.wrongState("no LDA consent is asked for")
        }
        guard consent, let device = try await credentials.deviceKeys.challenge(for: DeviceChallengeText.loginSubject(user: user),
                                                                               peer: session.peer, config: context.config)
        else {
            return Reply(events: [askForNewPassword(user: user, session: &session, context: context)])
        }
        session.pending = .loginDeviceSignature(user: user, challenge: device, openedAt: context.now)
        return Reply(events: [
            .getLDASignature(user: user, challengeMode: .set, challenge: Base64URL.encode(device.bytes), deviceKeys: device.deviceKeyIDs,
                             attemptsLeft: context.config.forgotPassword.maxAttempts, status: .success),
        ])
    }

    /// Path A: the device's signature over the login challenge logs the user in and unblocks.
    /// Wrong signatures draw on the name's activation-code budget, reserved before the check.
    func answerLoginDeviceSignature(_ signature: String, kid: String, user: String, challenge: DeviceChallenge,
                                    session: inout Session, context: RequestContext) async throws -> Reply {
        let reservation = try await credentials.store.reserveActivationAttempt(name: user, maxAttempts: context.config.forgotPassword.maxAttempts,
                                                                               now: context.now)
        let token = try await credentialToken(user: user)
        if case .granted = reservation,
           try await credentials.deviceKeys.isValidSignature(signature, kid: kid, challenge: challenge, user: user, config: context.config),
           try await credentials.store.useOnce("lda-nonce:" + challenge.nonce, expiresAt: context.challengeExpiry, now: context.now) {
            _ = try await credentials.store.unlockUser(named: user)
            return Reply(events: [try logIn(user, token: token, session: &session, now: context.now)])
        }
        guard case let .granted(attemptsLeft) = reservation, attemptsLeft > 0,
              let fresh = try await credentials.deviceKeys.challenge(for: DeviceChallengeText.loginSubject(user: user),
                                                                     peer: session.peer, config: context.config)
        else {
            session.pending = nil
            return Reply(events: [
                .getLDASignature(user: user, challengeMode: .set, challenge: Base64URL.encode(challenge.bytes), deviceKeys: challenge.deviceKeyIDs,
                                 attemptsLeft: 0, status: .attemptsExhausted),
                .getUser,
            ])
        }
        session.pending = .loginDeviceSignature(user: user, challenge: fresh, openedAt: context.now)
        return Reply(events: [
            .getLDASignature(user: user, challengeMode: .set, challenge: Base64URL.encode(fresh.bytes), deviceKeys: fresh.deviceKeyIDs,
                             attemptsLeft: attemptsLeft, status: .authenticationFailed(attemptsLeft: attemptsLeft)),
        ])
    }

    /// Makes a code and hashes it (in the peer's turn of the check queue), counts it against
    /// the name's hourly budget (error 14 past `max_codes_per_hour`), stores it and hands it to
    /// the delivery queue; returns the verification key and the wrong codes so far in the
    /// budget's window. For a name that is not a user the same work is done, nothing is
    /// stored or sent, and the reply does not wait for delivery in either case.
    private func issueActivationCode(user: String, peer: Peer, context: RequestContext) async throws -> (verificationKey: String, failures: Int) {
        let code = try ActivationCode.generate(length: context.config.forgotPassword.codeLength)
        let verificationKey = try VerificationKey.generate()
        let expiresAt = context.now.addingTimeInterval(Double(context.config.forgotPassword.codeTTLSeconds))
        let parameters = context.config.password.scryptParameters
        let hash = try await credentials.passwords.checks.withSlot(uid: peer.uid, limit: context.config.password.maxChecksPerUID) { slot in
            try await slot.run { try ActivationCode.hash(code, parameters: parameters) }
        }
        let record = ActivationCodeRecord(user: user, codeHash: hash, verificationKey: verificationKey, expiresAt: expiresAt)
        switch try await credentials.store.issueActivationCode(record, maxCodesPerHour: context.config.forgotPassword.maxCodesPerHour, now: context.now) {
        case .limitReached:
            throw StepSignError(.busy, "too many activation codes for this user (forgot_password.max_codes_per_hour); try again later")
        case let .issued(failures, stored):
            if stored {
                credentials.codeDelivery.send(ActivationMessage(user: user, verificationKey: verificationKey, activationCode: code,
                                                                expiresAt: expiresAt),
                                              via: CodeNotifierFactory.make(config: context.config, stateDirectory: context.config.server.stateDir))
            }
            return (verificationKey, failures)
        }
    }
}
