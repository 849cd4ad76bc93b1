import StepSignCrypto
import StepSignProtocol

/// The IDV server's biometric assertion as the step-up of a signing (`getIDVBiometric` mode
/// 12): a JWS by a trusted key, fresh, for this user, carrying the challenge's nonce and the
/// `txn` of its operation text (``IDVAssertionVerifier``); assertion and nonce used once.
struct IDVBiometricStepUp: StepUpAuthenticator {
    var challenge: IDVChallenge

    var used: String { "idv-biometric" }

    /// A new challenge for `subject` asked by `peer`: a fresh nonce and the operation text.
    init(for subject: StepUpSubject, peer: Peer) throws {
        let nonce = Base64URL.encode(try SecureRandom.bytes(count: 16))
        challenge = IDVChallenge(nonce: nonce, text: subject.idvChallengeText(nonce: nonce, peer: peer))
    }

    func event(for subject: StepUpSubject, attemptsLeft: Int, status: Status) -> Event {
        .getIDVBiometric(user: subject.user, challengeMode: .stepUpForSigning, nonce: challenge.nonce,
                         challenge: Base64URL.encode(challenge.text), attemptsLeft: attemptsLeft, status: status,
                         manifest: subject.manifest)
    }

    func answerer(for answer: StepUpAnswer) -> (any StepUpAuthenticator)? {
        if case .idvAssertion = answer { return self }
        return nil
    }

    func check(_ answer: StepUpAnswer, for subject: StepUpSubject, using dependencies: StepUpDependencies,
               context: RequestContext) async throws -> StepUpOutcome {
        guard case let .idvAssertion(assertion) = answer else { throw StepSignError.wrongState("no IDV biometric challenge is open") }
        guard let keys = context.idvKeys else {
            throw StepSignError(.notSupported, "IDV biometric step-up is not configured (idv.issuer)")
        }
        let outcome = try await dependencies.passwords.checkWithAttempt(user: subject.user, context: context,
                                                                        logger: dependencies.logger) {
            try await rejection(of: assertion, keys: keys, user: subject.user, dependencies: dependencies, context: context)
                .map { "IDV assertion rejected (\($0.rawValue))" }
        }
        return StepUpOutcome(outcome)
    }

    func retry(for subject: StepUpSubject, using dependencies: StepUpDependencies,
               context: RequestContext) async throws -> (any StepUpAuthenticator)? {
        try IDVBiometricStepUp(for: subject, peer: context.peer)
    }

    /// Why `assertion` does not approve this challenge (the signing for `user`), or nil when it
    /// does (and it is now used up, on every connection and daemon sharing the store).
    private func rejection(of assertion: String, keys: TrustedKeys, user: String, dependencies: StepUpDependencies,
                           context: RequestContext) async throws -> IDVAssertionVerifier.Rejection? {
        let use: IDVAssertionVerifier.SingleUse
        do {
            use = try dependencies.idvVerifier.verify(assertion, issuer: context.config.idv.issuer, keys: keys,
                                                      maxAgeSeconds: context.config.idv.maxAgeSeconds, user: user,
                                                      challenge: challenge, now: context.now)
        } catch {
            return error
        }
        // The IDV server vouches for a person; stepsign signs only for its own users.
        guard try await dependencies.users.user(named: user) != nil else { return .unknownUser }
        guard try await dependencies.singleUse.useOnce(use.value, expiresAt: use.expiresAt, now: context.now),
              try await dependencies.singleUse.useOnce("idv-nonce:" + challenge.nonce, expiresAt: context.challengeExpiry,
                                                       now: context.now)
        else { return .replayed }
        return nil
    }
}

/// An IDV challenge: the nonce and the operation text (``IDVChallengeText``) an assertion
/// must be bound to.
struct IDVChallenge: Sendable, Equatable {
    /// The nonce inside `text`, used once (SPEC §5.1).
    var nonce: String
    var text: [UInt8]
}
