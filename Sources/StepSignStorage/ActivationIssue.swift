/// What ``StepSignStore/issueActivationCode(_:maxCodesPerHour:now:)`` did.
public enum ActivationIssue: Sendable, Equatable {
    /// The code counts against the name's hourly budget. `failedAttempts` wrong codes were
    /// entered for the name in the budget's window (a new code does not reset them);
    /// `stored` is false when the name is not a user (nothing is kept, nothing is to be sent).
    case issued(failedAttempts: Int, stored: Bool)
    /// The name had `forgot_password.max_codes_per_hour` codes in the window; nothing changed.
    case limitReached
}
