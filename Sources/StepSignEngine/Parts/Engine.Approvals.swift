import Synchronization
import StepSignStorage

extension Engine {
    /// Requests waiting for approval by several people and the groups that approve them
    /// (SPEC §3.4): the part of the engine's state the approval flows use.
    final class Approvals: Sendable {
        /// Approval requests, their votes, and the approver groups.
        let store: any ApprovalStore
        /// Set when shutdown begins: a `getApproval` that waits answers at once
        /// (``Engine/endWaits()``).
        let waitsEnded = Atomic<Bool>(false)

        init(store: any ApprovalStore) {
            self.store = store
        }
    }
}
