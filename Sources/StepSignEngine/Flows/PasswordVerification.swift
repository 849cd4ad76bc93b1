import StepSignStorage

/// The outcome of one checked password (``PasswordAuthenticator/verify(user:password:peer:config:now:)``).
enum PasswordVerification: Sendable, Equatable {
    /// Right: the user's record as read for the check (after the attempt was reserved), whose
    /// hash matched. The flow goes on with it: its credential token for a login, its expiry.
    case accepted(UserRecord)
    case rejected(attemptsLeft: Int)
    /// No attempt was left (the password was not checked), or this one was the last.
    case exhausted

}
