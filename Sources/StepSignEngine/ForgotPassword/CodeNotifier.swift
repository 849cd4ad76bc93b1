/// Delivers a message to a user out of band: an activation code (SPEC §3.2 `forgotPassword`),
/// or the news that a request waits for their approval (SPEC §3.4).
///
/// `deliver` returns once the message is handed over durably (written and synced, or accepted
/// by the notifier program). Implementations never put the message's secret in an error, a
/// log line, a program's arguments or its environment.
public protocol CodeNotifier: Sendable {
    /// Hands `message` over for delivery; throws if that failed.
    func deliver(_ message: some NotifierMessage) async throws
}

/// What a ``CodeNotifier`` delivers: one JSON object for one user.
public protocol NotifierMessage: Sendable {
    /// The user it is for.
    var user: String { get }
    /// The JSON object followed by `\n`: what the outbox appends and a notifier reads on stdin.
    var jsonLine: [UInt8] { get }
}
