import StepSignProtocol

/// One way to answer the step-up of a signing (SPEC §3.2, challenge mode 12): the challenge
/// it shows, how an answer to it is checked, and what is asked after a wrong answer.
///
/// ``PasswordStepUp``, ``DeviceKeyStepUp`` and ``IDVBiometricStepUp`` are the three; the
/// signing flow (`Engine.answerStepUp`) is the same for each: the answer's attempt is reserved
/// before it is looked at (SPEC §5.1), a right answer signs, a wrong one asks again with
/// ``retry(for:using:context:)`` or ends with 153 when no attempt is left.
protocol StepUpAuthenticator: Sendable {
    /// `authenticatorUsed` of a signature this authenticator's answer approved.
    var used: String { get }

    /// The mode-12 event that asks `subject`'s user for this authenticator's answer: the
    /// first time (status 100) and after a wrong answer (102); a batch's carries its manifest.
    func event(for subject: StepUpSubject, attemptsLeft: Int, status: Status) -> Event

    /// The authenticator that checks `answer` while this one's challenge is open: itself,
    /// another one (a device key challenge may be answered with the password), or nil when
    /// `answer` does not answer this challenge.
    func answerer(for answer: StepUpAnswer) -> (any StepUpAuthenticator)?

    /// Checks `answer` to the step-up for `subject` under SPEC §5.1's rule: an attempt of the user is
    /// reserved first, the answer looked at only if one was granted, and given back if right.
    /// Throws (nothing counted) when the answer cannot be checked at all, e.g. its
    /// authenticator was switched off by a reload.
    func check(_ answer: StepUpAnswer, for subject: StepUpSubject, using dependencies: StepUpDependencies,
               context: RequestContext) async throws -> StepUpOutcome

    /// The challenge to show after a wrong answer: a fresh one (a new nonce, so an answer to
    /// the old one cannot be replayed, and a new `challenge_timeout_seconds`), or nil to ask
    /// again with the same challenge, whose time keeps running.
    func retry(for subject: StepUpSubject, using dependencies: StepUpDependencies,
               context: RequestContext) async throws -> (any StepUpAuthenticator)?
}

/// An answer to a signing's step-up, as the request that carries it gives it.
enum StepUpAnswer: Sendable {
    /// `setPassword` mode 12.
    case password(String)
    /// `setLDASignature`: the device key `kid` signed the challenge (a FIDO2 security key:
    /// signed its `authenticatorData` and the challenge's SHA-256, SPEC §5.7).
    case deviceSignature(kid: String, signature: String, authenticatorData: String? = nil)
    /// `setIDVBiometricAssertion`.
    case idvAssertion(String)
}

/// What one checked step-up answer means for the signing.
enum StepUpOutcome: Sendable, Equatable {
    /// Right: sign.
    case accepted
    /// The right password, but one that must be replaced first: 118, nothing signed.
    case passwordMustBeReplaced
    /// Wrong, with attempts left: ask again.
    case rejected(attemptsLeft: Int)
    /// No attempt was left (the answer was not looked at), or this wrong answer was the last:
    /// the user is blocked and the signing ends with 153.
    case exhausted
}

extension StepUpOutcome {
    /// Its `outcome` label in `stepsign_stepup_answers_total`.
    var metricLabel: String {
        switch self {
        case .accepted: "success"
        case .passwordMustBeReplaced: "must_replace"
        case .rejected: "wrong"
        case .exhausted: "blocked"
        }
    }

    /// The outcome of an answer checked by ``PasswordAuthenticator``'s attempt rule.
    init(_ outcome: PasswordAuthenticator.Outcome) {
        switch outcome {
        case .accepted: self = .accepted
        case let .rejected(attemptsLeft): self = .rejected(attemptsLeft: attemptsLeft)
        case .exhausted: self = .exhausted
        }
    }
}
