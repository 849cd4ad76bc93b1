import StepSignConfig
import StepSignProtocol
import struct Foundation.Date

extension Engine {
    /// The credential types a logged-in user may update.
    static let updatableCredentials = ["Password"]

    /// `getAllChallenges`: what the logged-in user may update.
    func getAllChallenges(session: inout Session, context: RequestContext) async throws -> Reply {
        let login = try await requireLogin(&session, context: context)
        return Reply(events: [.onCredentialsAvailableForUpdate(user: login.user, options: Self.updatableCredentials)])
    }

    /// `initiateUpdateFlowForCredential`: opens the mode-2 password challenge.
    func initiateUpdateFlow(_ type: String, session: inout Session, context: RequestContext) async throws -> Reply {
        let login = try await requireLogin(&session, context: context)
        guard Self.updatableCredentials.contains(type) else {
            throw StepSignError.invalid("unknown credential type \"\(type)\"; supported: \(Self.updatableCredentials.joined(separator: ", "))")
        }
        guard session.pending == nil else {
            throw StepSignError(.authenticationInProgress, "another authentication is already in progress in this session")
        }
        guard let attemptsLeft = try await credentials.passwords.attemptsLeft(user: login.user, config: context.config, now: context.now) else {
            throw StepSignError(.userBlocked, "the user is blocked")
        }
        session.pending = .password(PasswordChallenge(user: login.user, mode: .update, openedAt: context.now))
        return Reply(events: [
            .getPassword(user: login.user, challengeMode: .update, attemptsLeft: attemptsLeft, status: .success,
                         info: policyInfo(context.config)),
        ])
    }

    /// Mode 2: the logged-in user replaces the password; success logs the session off.
    func updateLoggedIn(current: String, new: String, challenge: PasswordChallenge, session: inout Session, context: RequestContext) async throws -> Reply {
        let user = challenge.user
        func response(_ status: Status) -> Event {
            .onUpdateCredentialResponse(user: user, credType: "Password", status: status)
        }
        func endSession(_ status: Status) -> Reply {
            session.end()
            return Reply(events: [response(status), .onUserLoggedOff(user: user), .getUser])
        }
        // One read of the record serves both checks. The SDK's flow first: a password that
        // expired meanwhile answers 110 (and logs off).
        let record = try await credentials.store.user(named: user)
        if let record, record.mustReplacePassword(maxAgeDays: context.config.password.maxAgeDays, at: context.now) {
            return endSession(.passwordExpiredWhileUpdating)
        }
        // Otherwise a login that ended (changed elsewhere, blocked, removed, too old) is error 5.
        guard let login = session.login, login.user == user else { throw StepSignError.wrongState("not logged in") }
        _ = try checkLogin(login, user: record, session: &session, context: context)
        switch try await credentials.passwords.verify(user: user, password: current, peer: session.peer, config: context.config, now: context.now) {
        case let .rejected(attemptsLeft):
            return Reply(events: [
                .getPassword(user: user, challengeMode: .update, attemptsLeft: attemptsLeft,
                             status: .authenticationFailed(attemptsLeft: attemptsLeft), info: policyInfo(context.config)),
            ])
        case .exhausted:
            logger.warning("password update attempts exhausted, user blocked", metadata: ["user": "\(user)"])
            return endSession(.attemptsExhausted)
        case .accepted:
            let outcome = try await changePassword(user: user, to: new, context: context)
            if let refusal = outcome.status {
                return Reply(events: [
                    response(refusal),
                    .getPassword(user: user, challengeMode: .update, attemptsLeft: context.config.password.maxAttempts,
                                 status: refusal, info: policyInfo(context.config)),
                ])
            }
            return endSession(.success)
        }
    }
}
