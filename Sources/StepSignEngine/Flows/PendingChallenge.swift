import StepSignCrypto
import struct Foundation.Date
import StepSignProtocol

/// The one challenge a session may have open: what the next answer must be (SPEC §3.2).
///
/// Every flow is a state here, so a request that does not answer the open challenge is
/// refused with error 11 and one that starts a second authentication with 213.
enum PendingChallenge: Sendable {
    /// `authenticateUserAndSignData` is waiting for a step-up answer.
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
    var request: SigningRequest
    var authenticator: StepUpAuthenticator
    var openedAt: Date
}

/// How the step-up of a signing is answered.
enum StepUpAuthenticator: Sendable, Equatable {
    /// `getPassword` mode 12.
    case password
    /// `getLDASignature`: an enrolled device key signs `challenge`.
    case deviceKey(DeviceChallenge)
    /// `getIDVBiometric`: the IDV server's assertion must carry the challenge's nonce and
    /// the `txn` of its operation text.
    case idvBiometric(IDVChallenge)
}

extension StepUpAuthenticator {
    var isDeviceKey: Bool {
        if case .deviceKey = self { return true }
        return false
    }

    /// `authenticatorUsed` when this authenticator answers.
    var used: String {
        switch self {
        case .password: "password"
        case .deviceKey: "lda"
        case .idvBiometric: "idv-biometric"
        }
    }

    /// The mode-12 event that asks `user` for this authenticator's answer: the first time
    /// (status 100) and after a wrong answer (102, with a fresh challenge for device keys and IDV).
    func stepUpEvent(user: String, attemptsLeft: Int, status: Status) -> Event {
        switch self {
        case .password:
            .getPassword(user: user, challengeMode: .stepUpForSigning, attemptsLeft: attemptsLeft, status: status, info: [])
        case let .deviceKey(device):
            .getLDASignature(user: user, challengeMode: .stepUpForSigning, challenge: Base64URL.encode(device.bytes),
                             deviceKeys: device.deviceKeyIDs, attemptsLeft: attemptsLeft, status: status)
        case let .idvBiometric(idv):
            .getIDVBiometric(user: user, challengeMode: .stepUpForSigning, nonce: idv.nonce, challenge: Base64URL.encode(idv.text),
                             attemptsLeft: attemptsLeft, status: status)
        }
    }
}

/// An IDV challenge: the nonce and the operation text (``IDVChallengeText``) an assertion
/// must be bound to.
struct IDVChallenge: Sendable, Equatable {
    /// The nonce inside `text`, used once (SPEC §5.1).
    var nonce: String
    var text: [UInt8]
}

/// An LDA challenge: the exact bytes a device must sign, and the keys that may sign them.
struct DeviceChallenge: Sendable, Equatable {
    /// The nonce inside `bytes`, used once (SPEC §5.1).
    var nonce: String
    var bytes: [UInt8]
    var deviceKeyIDs: [String]
}
