import StepSignConfig
import StepSignProtocol

extension PasswordPolicyChecker {
    /// A checker of `policy` against the built-in list of common passwords.
    public init(policy: PasswordPolicy) {
        self.init(policy: policy, commonPasswords: .builtIn)
    }
}
