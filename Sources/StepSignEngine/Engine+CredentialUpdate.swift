import StepSignConfig
import StepSignProtocol
import struct Foundation.Date

extension Engine {
    /// The credential types a logged-in user may update.
    static let updatableCredentials = ["Password"]

    /// `getAllChallenges`: what the logged-in user may update.
    func getAllChallenges(session: inout Session, config: StepSignConfiguration,
                          now: Date) async throws -> Reply {
        let login = try await requireLogin(&session, config: config, now: now)
        return Reply(events: [.onCredentialsAvailableForUpdate(user: login.user, options: Self.updatableCredentials)])
    }

    /// `initiateUpdateFlowForCredential`: opens the mode-2 password challenge.
    func initiateUpdateFlow(_ type: String, session: inout Session, config: StepSignConfiguration, now: Date) async throws -> Reply {
        let login = try await requireLogin(&session, config: config, now: now)
        guard Self.updatableCredentials.contains(type) else {
            throw StepSignError.invalid("unknown credential type \"\(type)\"; supported: \(Self.updatableCredentials.joined(separator: ", "))")
        }
        guard session.pending == nil else {
            throw StepSignError(.authenticationInProgress, "another authentication is already in progress in this session")
        }
        guard let attemptsLeft = try await passwords.attemptsLeft(user: login.user, config: config, now: now) else {
            throw StepSignError(.userBlocked, "the user is blocked")
        }
        session.pending = .password(PasswordChallenge(user: login.user, mode: .update, openedAt: now))
        return Reply(events: [
            .getPassword(user: login.user, challengeMode: .update, attemptsLeft: attemptsLeft, status: .success,
                         info: policyInfo(config)),
        ])
    }

    /// Mode 2: the logged-in user replaces the password; success logs the session off.
    func updateLoggedIn(current: String, new: String, challenge: PasswordChallenge, session: inout Session, config: StepSignConfiguration, now: Date) async throws -> Reply {
        let user = challenge.user
        func response(_ status: Status) -> Event {
            .onUpdateCredentialResponse(user: user, credType: "Password", status: status)
        }
        func endSession(_ status: Status) -> Reply {
            session.end()
            return Reply(events: [response(status), .onUserLoggedOff(user: user), .getUser])
        }
        // The SDK's flow first: a password that expired meanwhile answers 110 (and logs off).
        if try await mustReplacePassword(user: user, config: config, now: now) {
            return endSession(.passwordExpiredWhileUpdating)
        }
        // Otherwise a login that ended (changed elsewhere, blocked, removed, too old) is error 5.
        _ = try await requireLogin(&session, config: config, now: now)
        switch try await passwords.verify(user: user, password: current, uid: session.peer.uid, config: config, now: now) {
        case let .rejected(attemptsLeft):
            return Reply(events: [
                .getPassword(user: user, challengeMode: .update, attemptsLeft: attemptsLeft,
                             status: .authenticationFailed(attemptsLeft: attemptsLeft), info: policyInfo(config)),
            ])
        case .exhausted:
            logger.warning("password update attempts exhausted, user blocked", metadata: ["user": "\(user)"])
            return endSession(.attemptsExhausted)
        case .accepted:
            let outcome = try await changePassword(user: user, to: new, config: config, now: now)
            if let refusal = outcome.status {
                return Reply(events: [
                    response(refusal),
                    .getPassword(user: user, challengeMode: .update, attemptsLeft: config.password.maxAttempts,
                                 status: refusal, info: policyInfo(config)),
                ])
            }
            return endSession(.success)
        }
    }
}
