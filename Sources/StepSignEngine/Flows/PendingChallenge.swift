import struct Foundation.Date

/// The one challenge a session may have open: what the next answer must be (SPEC §3.2).
///
/// Every flow is a state here, so a request that does not answer the open challenge is
/// refused with error 11 and one that starts a second authentication with 213.
enum PendingChallenge: Sendable {
    /// `authenticateUserAndSignData` is waiting for a step-up answer.
    case signing(SigningChallenge)

    var openedAt: Date {
        switch self {
        case let .signing(challenge): challenge.openedAt
        }
    }
}

/// A signing request waiting for its step-up (challenge mode 12).
struct SigningChallenge: Sendable {
    var request: SigningRequest
    var authenticator: StepUpAuthenticator
    var openedAt: Date
}

/// How the step-up of a signing is answered.
enum StepUpAuthenticator: Sendable, Equatable {
    case password
}
