import Logging
import NIOConcurrencyHelpers
import StepSignStorage

/// Holds why the log cannot be extended, once the store found its Merkle tree not matching the
/// entries (SPEC §5.5: a database whose log was rewritten or cut behind the daemon's back):
/// logged at critical once, shown by `status` (`logProblem`), and every signing and event is
/// refused with 15 until the database is restored. The daemon keeps serving the rest (the
/// audit that shows what was done, the keys).
final class LogAlarm: Sendable {
    private let problem = NIOLockedValueBox<String?>(nil)
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Why the log is refused, or nil while it is fine.
    var current: String? { problem.withLockedValue { $0 } }

    /// Records `why`, logging it at critical the first time.
    func report(_ why: String) {
        let first = problem.withLockedValue { state -> Bool in
            guard state == nil else { return false }
            state = why
            return true
        }
        guard first else { return }
        logger.critical("the ledger's Merkle tree does not match its entries: nothing is signed or recorded until the database is restored (SPEC 5.5)",
                        metadata: ["problem": "\(why)"])
    }

    /// Clears the alarm once the log was put right (`admin.recover` started a new epoch).
    func clear() {
        let was = problem.withLockedValue { state -> String? in
            defer { state = nil }
            return state
        }
        if was != nil { logger.notice("the log is signed again (SPEC 5.5)") }
    }
}
