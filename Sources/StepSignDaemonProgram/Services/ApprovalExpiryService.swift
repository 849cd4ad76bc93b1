import ServiceLifecycle
import StepSignEngine

/// Ends requests for approval whose time is over, or whose rule a reload removed, at most
/// five seconds late (`Engine.expireApprovals`), each recorded once on the store every daemon
/// shares (SPEC §3.4), until the group shuts down. A request answered or read meanwhile is
/// ended then, on time.
struct ApprovalExpiryService: Service {
    let engine: Engine

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(5))
                await engine.expireApprovals()
            }
        }
    }
}
