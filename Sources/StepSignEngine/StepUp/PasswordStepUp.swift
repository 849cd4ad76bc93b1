import StepSignProtocol

/// The password as the step-up of a signing (`getPassword` mode 12).
///
/// Its answer goes through ``PasswordAuthenticator/verify(user:password:peer:config:now:)``:
/// the peer's uid queue, the reserved attempt, scrypt in turn. After a wrong answer the same
/// challenge is asked again.
struct PasswordStepUp: StepUpAuthenticator {
    var used: String { "password" }

    func event(for subject: StepUpSubject, attemptsLeft: Int, status: Status) -> Event {
        .getPassword(user: subject.user, challengeMode: .stepUpForSigning, attemptsLeft: attemptsLeft, status: status, info: [],
                     manifest: subject.manifest)
    }

    func answerer(for answer: StepUpAnswer) -> (any StepUpAuthenticator)? {
        if case .password = answer { return self }
        return nil
    }

    func check(_ answer: StepUpAnswer, for subject: StepUpSubject, using dependencies: StepUpDependencies,
               context: RequestContext) async throws -> StepUpOutcome {
        guard case let .password(password) = answer else { throw StepSignError.wrongState("no password challenge is open") }
        let user = subject.user
        switch try await dependencies.passwords.verify(user: user, password: password, peer: context.peer,
                                                       config: context.config, now: context.now) {
        case let .accepted(record):
            // Only a password change may use a password that must be replaced. The right
            // answer has given its attempt back already; the record is the one it was checked
            // against (one read per answer).
            return record.mustReplacePassword(maxAgeDays: context.config.password.maxAgeDays, at: context.now)
                ? .passwordMustBeReplaced : .accepted
        case let .rejected(attemptsLeft):
            dependencies.logger.info("step-up password rejected", metadata: ["user": "\(user)", "attemptsLeft": "\(attemptsLeft)"])
            return .rejected(attemptsLeft: attemptsLeft)
        case .exhausted:
            return .exhausted
        }
    }

    func retry(for subject: StepUpSubject, using dependencies: StepUpDependencies,
               context: RequestContext) async throws -> (any StepUpAuthenticator)? {
        nil
    }
}
