import NIOPosix
import StepSignConfig
import StepSignCrypto
import StepSignStorage
import struct Foundation.Date

extension Engine {
    /// `forgotPassword` (SPEC §3.2): only from an open mode-0 challenge of that user, and only
    /// when `forgot_password.enabled`; otherwise error 170.
    func forgotPassword(_ request: Request, session: inout Session, config: StepSignConfiguration, now: Date) async throws -> Reply {
        try request.allowOnly(["user"])
        let user = try request.string("user")
        guard config.forgotPassword.enabled else {
            throw StepSignError(.notSupported, "forgot password is disabled (forgot_password.enabled)")
        }
        guard case let .password(challenge)? = session.pending, challenge.mode == .verify, challenge.user == user else {
            throw StepSignError(.notSupported, "forgotPassword is only available from the mode-0 password challenge of that user")
        }
        let verificationKey = try await issueActivationCode(user: user, failures: 0, config: config, now: now)
        session.pending = .activationCode(ActivationChallenge(user: user, verificationKey: verificationKey,
                                                              unknownUserFailures: 0, openedAt: now))
        return Reply(id: request.id, events: [
            .getActivationCode(user: user, verificationKey: verificationKey,
                               attemptsLeft: config.forgotPassword.maxAttempts, status: .success),
        ])
    }

    /// `resendActivationCode`: a new code and verification key; the old code stops working.
    /// Wrong attempts so far still count.
    func resendActivationCode(_ request: Request, session: inout Session, config: StepSignConfiguration, now: Date) async throws -> Reply {
        try request.allowOnly([])
        guard case var .activationCode(challenge)? = session.pending else {
            throw StepSignError.wrongState("no activation code challenge is open")
        }
        let failures = try await store.activationCode(user: challenge.user)?.failedAttempts ?? challenge.unknownUserFailures
        challenge.verificationKey = try await issueActivationCode(user: challenge.user, failures: failures, config: config, now: now)
        session.pending = .activationCode(challenge)
        return Reply(id: request.id, events: [
            .getActivationCode(user: challenge.user, verificationKey: challenge.verificationKey,
                               attemptsLeft: max(0, config.forgotPassword.maxAttempts - failures), status: .success),
        ])
    }

    /// `setActivationCode`: a right code leads to a new password (Path B, mode 1).
    func setActivationCode(_ request: Request, session: inout Session, config: StepSignConfiguration, now: Date) async throws -> Reply {
        try request.allowOnly(["activationCode"])
        let typed = try request.string("activationCode")
        guard case var .activationCode(challenge)? = session.pending else {
            throw StepSignError.wrongState("no activation code challenge is open")
        }
        let user = challenge.user
        let record = try await store.activationCode(user: user)
        let encoded = record?.codeHash ?? passwords.dummyHash
        let matches = try await NIOThreadPool.singleton.runIfActive {
            try ActivationCode.matches(typed, hash: encoded)
        }
        if let record, matches, now < record.expiresAt {
            try await store.deleteActivationCode(user: user)
            logger.notice("activation code accepted", metadata: ["user": "\(user)"])
            if try await !activeDeviceKeys(user: user, config: config).isEmpty {
                session.pending = .ldaConsent(user: user, openedAt: now)
                return Reply(id: request.id, events: [.getUserConsentForLDA(user: user, challengeMode: .set)])
            }
            return Reply(id: request.id, events: [askForNewPassword(user: user, session: &session, config: config, now: now)])
        }
        let failures: Int
        if record != nil, let counted = try await store.recordFailedActivationAttempt(user: user) {
            failures = counted
        } else {
            challenge.unknownUserFailures += 1
            failures = challenge.unknownUserFailures
        }
        let attemptsLeft = max(0, config.forgotPassword.maxAttempts - failures)
        logger.info("activation code rejected", metadata: ["user": "\(user)", "attemptsLeft": "\(attemptsLeft)"])
        guard attemptsLeft > 0 else {
            try await store.deleteActivationCode(user: user)
            session.pending = nil
            return Reply(id: request.id, events: [
                .getActivationCode(user: user, verificationKey: challenge.verificationKey, attemptsLeft: 0,
                                   status: .activationAttemptsExhausted),
                .getUser,
            ])
        }
        session.pending = .activationCode(challenge)
        return Reply(id: request.id, events: [
            .getActivationCode(user: user, verificationKey: challenge.verificationKey, attemptsLeft: attemptsLeft,
                               status: .invalidActivationCode(attemptsLeft: attemptsLeft)),
        ])
    }

    /// Path B: opens the mode-1 challenge for a new password.
    private func askForNewPassword(user: String, session: inout Session, config: StepSignConfiguration, now: Date) -> Event {
        session.pending = .password(PasswordChallenge(user: user, mode: .set, openedAt: now))
        return .getPassword(user: user, challengeMode: .set, attemptsLeft: config.password.maxAttempts, status: .success,
                            info: policyInfo(config))
    }

    /// `setUserConsentForLDA` (Path A): yes → the device signs a login challenge; no → Path B.
    func setUserConsentForLDA(_ request: Request, session: inout Session, config: StepSignConfiguration, now: Date) async throws -> Reply {
        try request.allowOnly(["consent"])
        guard let consent = try request.optionalBool("consent") else { throw StepSignError.invalid("missing parameter \"consent\"") }
        guard case let .ldaConsent(user, _)? = session.pending else {
            throw StepSignError.wrongState("no LDA consent is asked for")
        }
        guard consent, let device = try await deviceChallenge(user: user, payload: DeviceChallengeText.loginPayload,
                                                              reason: DeviceChallengeText.loginReason, peer: session.peer,
                                                              config: config)
        else {
            return Reply(id: request.id, events: [askForNewPassword(user: user, session: &session, config: config, now: now)])
        }
        session.pending = .loginDeviceSignature(user: user, challenge: device, failures: 0, openedAt: now)
        return Reply(id: request.id, events: [
            .getLDASignature(user: user, challengeMode: .set, challenge: device.bytes, deviceKeys: device.deviceKeyIDs,
                             attemptsLeft: config.forgotPassword.maxAttempts, status: .success),
        ])
    }

    /// Path A: the device's signature over the login challenge logs the user in and unblocks.
    func answerLoginDeviceSignature(_ signature: String, kid: String, user: String, challenge: DeviceChallenge, failures: Int,
                                    request: Request, session: inout Session, config: StepSignConfiguration,
                                    now: Date) async throws -> Reply {
        if try await isValidDeviceSignature(signature, kid: kid, challenge: challenge, user: user, config: config) {
            _ = try await store.unlockUser(named: user)
            return Reply(id: request.id, events: [try logIn(user, session: &session)])
        }
        let attemptsLeft = max(0, config.forgotPassword.maxAttempts - failures - 1)
        guard attemptsLeft > 0,
              let fresh = try await deviceChallenge(user: user, payload: DeviceChallengeText.loginPayload,
                                                    reason: DeviceChallengeText.loginReason, peer: session.peer, config: config)
        else {
            session.pending = nil
            return Reply(id: request.id, events: [
                .getLDASignature(user: user, challengeMode: .set, challenge: challenge.bytes, deviceKeys: challenge.deviceKeyIDs,
                                 attemptsLeft: 0, status: .attemptsExhausted),
                .getUser,
            ])
        }
        session.pending = .loginDeviceSignature(user: user, challenge: fresh, failures: failures + 1, openedAt: now)
        return Reply(id: request.id, events: [
            .getLDASignature(user: user, challengeMode: .set, challenge: fresh.bytes, deviceKeys: fresh.deviceKeyIDs,
                             attemptsLeft: attemptsLeft, status: .authenticationFailed(attemptsLeft: attemptsLeft)),
        ])
    }

    /// Makes a code, stores its hash and has the notifier deliver it; returns the verification
    /// key. For a name that is not a user the same work is done and nothing is stored or sent.
    private func issueActivationCode(user: String, failures: Int, config: StepSignConfiguration, now: Date) async throws -> String {
        let code = try ActivationCode.generate(length: config.forgotPassword.codeLength)
        let verificationKey = try VerificationKey.generate()
        let expiresAt = now.addingTimeInterval(Double(config.forgotPassword.codeTTLSeconds))
        let parameters = config.password.scryptParameters
        let hash = try await NIOThreadPool.singleton.runIfActive {
            try ActivationCode.hash(code, parameters: parameters)
        }
        guard try await store.user(named: user) != nil else { return verificationKey }
        try await store.putActivationCode(ActivationCodeRecord(user: user, codeHash: hash, verificationKey: verificationKey,
                                                               expiresAt: expiresAt, failedAttempts: failures))
        do {
            try await CodeNotifierFactory.make(config: config, stateDirectory: config.server.stateDir).deliver(ActivationMessage(user: user, verificationKey: verificationKey,
                                                                 activationCode: code, expiresAt: expiresAt))
        } catch {
            try await store.deleteActivationCode(user: user)
            logger.error("activation code not delivered", metadata: ["user": "\(user)", "error": "\(error)"])
            throw StepSignError.internalError("the activation code could not be delivered; try again later")
        }
        logger.notice("activation code sent", metadata: ["user": "\(user)", "verificationKey": "\(verificationKey)"])
        return verificationKey
    }
}
