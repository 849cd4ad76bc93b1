/// Delivers an activation code to its user out of band (SPEC §3.2 `forgotPassword`).
///
/// `deliver` returns once the message is handed over durably (written and synced, or accepted
/// by the notifier program). Implementations never put the code in an error, a log line, a
/// program's arguments or its environment.
public protocol CodeNotifier: Sendable {
    /// Hands `message` over for delivery; throws if that failed.
    func deliver(_ message: ActivationMessage) async throws
}
