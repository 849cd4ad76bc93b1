import StepSignProtocol

/// The first rule of a `PasswordPolicy` that a password breaks.
///
/// `message` names the rule by its SDK field name, e.g. "must contain at least 1 digit
/// (minDg)", whether or not the policy has a `msg`: `msg` replaces only the description
/// shown to users, never the reason logged or returned with status 190. Messages never
/// quote the password.
public struct PolicyViolation: Error, Sendable, Equatable, CustomStringConvertible {
    /// The rule that was broken.
    public var rule: PasswordPolicyRule
    /// What the password must (not) do, ending with the rule's SDK name in parentheses.
    public var message: String

    public init(rule: PasswordPolicyRule, message: String) {
        self.rule = rule
        self.message = message
    }

    public var description: String { message }
}
