import StepSignConfig
import StepSignProtocol
import StepSignStorage

/// What became of a new password (modes 1, 2 and 4).
enum PasswordChangeOutcome: Sendable {
    /// Stored; the old one went into the history. The user's new credential token: the login
    /// of the session that changed the password goes on with it, every other login ends.
    case changed(CredentialToken)
    /// Refused: it breaks a rule of the policy (status 190).
    case policyViolated(PolicyViolation)
    /// Refused: the current password or one of the last `history` ones (status 164).
    case reused

    /// The status of a refusal.
    var status: Status? {
        switch self {
        case .changed: nil
        case let .policyViolated(violation): .policyViolated(violation.message)
        case .reused: .passwordReused
        }
    }
}
