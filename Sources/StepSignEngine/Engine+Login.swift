import StepSignConfig
import StepSignProtocol
import struct Foundation.Date

extension Engine {
    /// `setUser` (SPEC §3.2): opens the mode-0 password challenge. Unknown users look the same.
    func setUser(_ user: String, session: inout Session, context: RequestContext) async throws -> Reply {
        try UserName.validate(user)
        guard try await currentLogin(&session, context: context) == nil else {
            throw StepSignError.wrongState("already logged in; logOff first")
        }
        guard session.pending == nil else {
            throw StepSignError(.authenticationInProgress, "another authentication is already in progress in this session")
        }
        let attemptsLeft = try await credentials.passwords.attemptsLeft(user: user, config: context.config, now: context.now)
        session.pending = .password(PasswordChallenge(user: user, mode: .verify, openedAt: context.now))
        return Reply(events: [
            .getPassword(user: user, challengeMode: .verify, attemptsLeft: attemptsLeft ?? 0,
                         status: attemptsLeft == nil ? .attemptsExhausted : .success, info: forgotPasswordInfo(context.config)),
        ])
    }

    /// `setPassword` (SPEC §3.2): answers the open password challenge of mode 0, 1 or 12.
    func setPassword(_ password: String, mode: Int, session: inout Session, context: RequestContext) async throws -> Reply {
        let answer = StepUpAnswer.password(password)
        if let (challenge, answerer) = stepUpChallenge(answeredBy: answer, in: session) {
            // A client whose device cannot answer getLDASignature may fall back to the password.
            guard mode == ChallengeMode.stepUpForSigning.rawValue else {
                throw StepSignError.wrongState("the open password challenge is mode 12, not \(mode)")
            }
            return try await answerStepUp(answer, to: challenge, answerer: answerer, session: &session, context: context)
        }
        switch session.pending {
        case let .password(challenge)? where challenge.mode == .verify || challenge.mode == .set:
            guard mode == challenge.mode.rawValue else {
                throw StepSignError.wrongState("the open password challenge is mode \(challenge.mode.rawValue), not \(mode)")
            }
            if challenge.mode == .verify {
                return try await verifyLoginPassword(password, challenge: challenge, session: &session,
                                                     context: context)
            }
            return try await setNewPassword(password, challenge: challenge, session: &session,
                                            context: context)
        default:
            throw StepSignError.wrongState("no password challenge of mode \(mode) is open")
        }
    }

    /// Mode 0: the password of a login.
    private func verifyLoginPassword(_ password: String, challenge: PasswordChallenge, session: inout Session, context: RequestContext) async throws -> Reply {
        let user = challenge.user
        guard try await credentials.passwords.attemptsLeft(user: user, config: context.config, now: context.now) != nil else {
            throw StepSignError(.userBlocked, "the user is blocked")
        }
        switch try await credentials.passwords.verify(user: user, password: password, peer: session.peer, config: context.config, now: context.now) {
        case let .accepted(record):
            // The record whose hash was checked: its token is the login's (a change after
            // this read ends the login), its expiry decides whether it must be replaced first.
            if record.mustReplacePassword(maxAgeDays: context.config.password.maxAgeDays, at: context.now) {
                session.pending = .password(PasswordChallenge(user: user, mode: .updateOnExpiry, openedAt: context.now))
                let attemptsLeft = try await credentials.passwords.attemptsLeft(user: user, config: context.config, now: context.now) ?? 0
                return Reply(events: [
                    .getPassword(user: user, challengeMode: .updateOnExpiry, attemptsLeft: attemptsLeft,
                                 status: .passwordExpired, info: policyInfo(context.config)),
                ])
            }
            return Reply(events: [try logIn(user, token: record.credentialToken, session: &session, now: context.now)])
        case let .rejected(attemptsLeft):
            return Reply(events: [
                .getPassword(user: user, challengeMode: .verify, attemptsLeft: attemptsLeft,
                             status: .authenticationFailed(attemptsLeft: attemptsLeft), info: forgotPasswordInfo(context.config)),
            ])
        case .exhausted:
            session.pending = nil
            logger.warning("login attempts exhausted, user blocked", metadata: ["user": "\(user)"])
            return Reply(events: [
                .getPassword(user: user, challengeMode: .verify, attemptsLeft: 0, status: .attemptsExhausted,
                             info: forgotPasswordInfo(context.config)),
                .getUser,
            ])
        }
    }

    /// Mode 1: the new password after a right activation code (forgot password, Path B).
    private func setNewPassword(_ password: String, challenge: PasswordChallenge, session: inout Session, context: RequestContext) async throws -> Reply {
        let user = challenge.user
        let outcome = try await changePassword(user: user, to: password, context: context, event: .passwordReset)
        guard case let .changed(token) = outcome else {
            return Reply(events: [
                .getPassword(user: user, challengeMode: .set, attemptsLeft: context.config.password.maxAttempts,
                             status: outcome.status ?? .passwordReused, info: policyInfo(context.config)),
            ])
        }
        _ = try await credentials.store.unlockUser(named: user)
        return Reply(events: [try logIn(user, token: token, session: &session, now: context.now)])
    }

    /// `updatePassword` (SPEC §3.2): mode 4 (expired, during login) or mode 2 (logged in).
    func updatePassword(current: String, new: String, mode: Int, session: inout Session, context: RequestContext) async throws -> Reply {
        guard case let .password(challenge)? = session.pending,
              challenge.mode == .updateOnExpiry || challenge.mode == .update
        else { throw StepSignError.wrongState("no password update challenge is open") }
        guard mode == challenge.mode.rawValue else {
            throw StepSignError.wrongState("the open password challenge is mode \(challenge.mode.rawValue), not \(mode)")
        }
        guard current != new else {
            throw StepSignError(.samePassword, "the current and the new password are the same")
        }
        if challenge.mode == .update {
            return try await updateLoggedIn(current: current, new: new, challenge: challenge, session: &session, context: context)
        }
        return try await updateExpired(current: current, new: new, challenge: challenge, session: &session, context: context)
    }

    /// Mode 4: replace an expired password, then log in.
    private func updateExpired(current: String, new: String, challenge: PasswordChallenge, session: inout Session, context: RequestContext) async throws -> Reply {
        let user = challenge.user
        func prompt(_ status: Status, attemptsLeft: Int) -> Event {
            .getPassword(user: user, challengeMode: .updateOnExpiry, attemptsLeft: attemptsLeft, status: status,
                         info: policyInfo(context.config))
        }
        switch try await credentials.passwords.verify(user: user, password: current, peer: session.peer, config: context.config, now: context.now) {
        case let .rejected(attemptsLeft):
            return Reply(events: [prompt(.authenticationFailed(attemptsLeft: attemptsLeft), attemptsLeft: attemptsLeft)])
        case .exhausted:
            session.pending = nil
            return Reply(events: [prompt(.attemptsExhausted, attemptsLeft: 0), .getUser])
        case .accepted:
            let outcome = try await changePassword(user: user, to: new, context: context)
            guard case let .changed(token) = outcome else {
                return Reply(events: [prompt(outcome.status ?? .passwordReused,
                                                             attemptsLeft: context.config.password.maxAttempts)])
            }
            return Reply(events: [try logIn(user, token: token, session: &session, now: context.now)])
        }
    }

    /// `logOff`: ends the login (error 5 if it had already ended).
    func logOff(session: inout Session, context: RequestContext) async throws -> Reply {
        let login = try await requireLogin(&session, context: context)
        session.end()
        credentials.stepUpReuse.end(user: login.user, scope: StepUpReuseWindows.scope(of: session, settings: context.config.stepUp))
        credentials.sshAgent.end(uid: session.peer.uid, user: login.user)
        logger.info("logged off", metadata: ["user": "\(login.user)"])
        return Reply(events: [.onUserLoggedOff(user: login.user), .getUser])
    }

    /// `resetAuthState`: cancels an open login-flow challenge; a login stays.
    func resetAuthState(session: inout Session) -> Reply {
        if session.pending?.isLoginFlow == true { session.pending = nil }
        return Reply(events: [.getUser])
    }
}
