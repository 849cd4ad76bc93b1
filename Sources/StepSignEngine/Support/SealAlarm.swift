import Logging
import NIOConcurrencyHelpers
import StepSignStorage

/// Says, at critical and once per user and kind of failure, that a credential record failed
/// its seal check (SPEC §5.4): someone wrote the database behind the daemon's back. The user
/// is answered as a blocked one every time; the line is logged once, so that a caller cannot
/// flood the journal by asking again. Holds at most one entry per stored user and kind.
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
}
