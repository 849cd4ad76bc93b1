import Logging
import NIOConcurrencyHelpers

/// Delivers activation codes after the reply, off the request path (SPEC §5.1).
///
/// `forgotPassword` answers at once, for users and for names that are not users alike, so
/// neither the reply nor its timing tells whether a code went out. A delivery that fails is
/// retried (after 1 s, then 5 s) and then given up with an error in the log; the caller never
/// sees it (the user asks for a new code). At most ``maxInFlight`` deliveries run at once;
/// past that a code is dropped with an error in the log, which `max_codes_per_hour` per user
/// makes a matter of thousands of users asking within seconds.
final class CodeDelivery: Sendable {
    /// Deliveries running or waiting to retry, at most.
    static let maxInFlight = 256
    /// Waits before the second and third try.
    static let retryDelays: [Duration] = [.seconds(1), .seconds(5)]

    private let logger: Logger
    private let inFlight = NIOLockedValueBox(0)

    init(logger: Logger) {
        self.logger = logger
    }

    /// Starts delivering `message` through `notifier` and returns at once.
    func send(_ message: ActivationMessage, via notifier: any CodeNotifier) {
        let admitted = inFlight.withLockedValue { count -> Bool in
            guard count < Self.maxInFlight else { return false }
            count += 1
            return true
        }
        guard admitted else {
            logger.error("activation code not delivered: too many deliveries in flight", metadata: ["user": "\(message.user)"])
            return
        }
        Task { [logger, inFlight] in
            defer { inFlight.withLockedValue { $0 -= 1 } }
            for attempt in 0...Self.retryDelays.count {
                do {
                    try await notifier.deliver(message)
                    logger.notice("activation code sent",
                                  metadata: ["user": "\(message.user)", "verificationKey": "\(message.verificationKey)"])
                    return
                } catch {
                    logger.warning("activation code delivery failed",
                                   metadata: ["user": "\(message.user)", "try": "\(attempt + 1)", "error": "\(error)"])
                }
                if attempt < Self.retryDelays.count {
                    try? await Task.sleep(for: Self.retryDelays[attempt])
                }
            }
            logger.error("activation code not delivered", metadata: ["user": "\(message.user)"])
        }
    }
}
