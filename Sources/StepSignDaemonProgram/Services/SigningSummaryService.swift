import ServiceLifecycle
import StepSignEngine

/// Logs the summary line of level-0 signatures at most five seconds after its minute
/// (`Engine.flushSigningSummary`), until the group shuts down (the engine's own shutdown logs
/// what is left).
struct SigningSummaryService: Service {
    let engine: Engine

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(5))
                engine.flushSigningSummary()
            }
        }
    }
}
