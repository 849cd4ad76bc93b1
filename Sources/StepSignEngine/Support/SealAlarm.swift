import Logging
import NIOConcurrencyHelpers
import StepSignStorage

/// Says, at critical and once per user (or request for approval) and kind of failure, that a
/// credential record (SPEC §5.4) or a request (SPEC §3.4) failed its seal check: someone wrote
/// the database behind the daemon's back. The user is answered as a blocked one every time,
/// the request is never acted on; the line is logged once, so that a caller cannot flood the
/// journal by asking again. Holds at most one entry per stored user or request and kind.
final class SealAlarm: Sendable {
    private let reported = NIOLockedValueBox<Set<String>>([])
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Reports `failure` of `user`'s record, unless it was reported already.
    func report(user: String, _ failure: SealFailure) {
        let first = reported.withLockedValue { $0.insert(user + "\u{0}" + failure.name).inserted }
        guard first else { return }
        logger.critical("credential record failed its seal check: the user is treated as blocked (SPEC 5.4)",
                        metadata: ["user": "\(user)", "problem": "\(failure)"])
    }

    /// Reports `failure` of the stored request for approval `id` (SPEC §3.4), unless it was
    /// reported already: the request is never acted on.
    func report(approval id: String, _ failure: SealFailure) {
        let first = reported.withLockedValue { $0.insert("approval\u{0}" + id + "\u{0}" + failure.name).inserted }
        guard first else { return }
        logger.critical("request for approval failed its seal check: it is never acted on (SPEC 3.4)",
                        metadata: ["approvalID": "\(id)", "problem": "\(failure)"])
    }
}
