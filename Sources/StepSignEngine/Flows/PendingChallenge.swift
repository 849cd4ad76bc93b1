import StepSignStorage
import struct Foundation.Date
import StepSignProtocol

/// The one challenge a session may have open: what the next answer must be (SPEC §3.2).
///
/// Every flow is a state here, so a request that does not answer the open challenge is
/// refused with error 11 and one that starts a second authentication with 213.
enum PendingChallenge: Sendable {
    /// `authenticateUserAndSignData` or `authenticateUserAndSignBatch` is waiting for a step-up answer.
    case signing(SigningChallenge)
    /// A login-flow password challenge: verify (0), set after an activation code (1), update
    /// while logged in (2), or update on expiry (4).
    case password(PasswordChallenge)
    /// Forgot password: waiting for the activation code.
    case activationCode(ActivationChallenge)
    /// Forgot password, Path A: waiting for the user's consent to log in with a device key.
    case ldaConsent(user: String, openedAt: Date)
    /// Forgot password, Path A: waiting for the device's signature over the login challenge.
    /// Wrong answers count against the name's activation-code budget (`forgot_password.max_attempts`).
    case loginDeviceSignature(user: String, challenge: DeviceChallenge, openedAt: Date)

    var openedAt: Date {
        switch self {
        case let .signing(challenge): challenge.openedAt
        case let .password(challenge): challenge.openedAt
        case let .activationCode(challenge): challenge.openedAt
        case let .ldaConsent(_, openedAt): openedAt
        case let .loginDeviceSignature(_, _, openedAt): openedAt
        }
    }

    /// Whether this belongs to a login flow (what `resetAuthState` cancels).
    var isLoginFlow: Bool {
        if case .signing = self { return false }
        return true
    }
}

/// A password challenge of a login flow.
struct PasswordChallenge: Sendable {
    var user: String
    var mode: ChallengeMode
    var openedAt: Date
}

/// Forgot password, waiting for the activation code the notifier delivered.
struct ActivationChallenge: Sendable {
    var user: String
    var verificationKey: String
    var openedAt: Date
}

/// A signing request waiting for its step-up (challenge mode 12).
struct SigningChallenge: Sendable {
    var work: SigningWork
    /// The authenticator whose challenge is open.
    var authenticator: any StepUpAuthenticator
    var openedAt: Date
}

/// What a step-up signs once it is answered: one payload, or a batch (SPEC §3.4).
enum SigningWork: Sendable {
    case one(SigningRequest)
    case batch(SigningBatch)
    /// Not a signing: an approver's answer to a request (SPEC §3.4), behind its own step-up.
    case approval(ApprovalDecision)

    /// Whose step-up it is.
    var user: String {
        switch self {
        case let .one(request): request.user
        case let .batch(batch): batch.user
        case let .approval(decision): decision.approver
        }
    }

    /// Its claim of an `idempotencyKey` (SPEC §3), given up when it ends unsigned.
    var idempotency: IdempotencyClaim? {
        switch self {
        case let .one(request): request.idempotency
        case let .batch(batch): batch.idempotency
        case .approval: nil
        }
    }

    /// What the step-up approves.
    var subject: StepUpSubject {
        switch self {
        case let .one(request): request.subject
        case let .batch(batch): batch.subject
        case let .approval(decision): decision.subject
        }
    }

    /// The outcome event when nothing is signed: the password must be replaced first (118) or
    /// the attempts ran out (153).
    func unsigned(status: Status, authenticatorUsed: String) -> Event {
        switch self {
        case let .one(request):
            .onAuthenticateUserAndSignData(details: request.details(authenticatorUsed: authenticatorUsed), status: status)
        case let .batch(batch):
            batch.unsigned(status: status)
        case let .approval(decision):
            .onApprovalResponse(approvalID: decision.request.id, decision: decision.name, state: decision.request.state.rawValue,
                                approvals: decision.request.votes.count, required: decision.request.rule.required, status: status)
        }
    }
}
