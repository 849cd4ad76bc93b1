import Logging
import NIOConcurrencyHelpers

/// Says once, not per request, that the state directory's filesystem is full (issue 27): the
/// first write that fails for want of space logs at critical, every request that needs a write
/// is refused with 15 meanwhile (nothing of it was written), and the first ledger commit that
/// succeeds afterwards logs, once, that space is back. Nothing needs a restart.
final class NoSpaceAlarm: Sendable {
    private let raised = NIOLockedValueBox(false)
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Whether the last write that could tell found no space.
    var isRaised: Bool { raised.withLockedValue { $0 } }

    /// A write failed for want of space (`error` says which); logged the first time.
    func report(_ error: any Error) {
        let first = raised.withLockedValue { raised in
            defer { raised = true }
            return !raised
        }
        guard first else { return }
        logger.critical("""
            no space left on the state directory's filesystem: nothing is signed or changed until space \
            is freed, then the daemon signs again by itself
            """, metadata: ["error": "\(error)"])
    }

    /// A ledger commit succeeded: if space had run out, it is back (logged once).
    func cleared() {
        let wasRaised = raised.withLockedValue { raised in
            defer { raised = false }
            return raised
        }
        guard wasRaised else { return }
        logger.notice("space again on the state directory's filesystem: signing resumed")
    }
}
