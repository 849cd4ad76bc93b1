import Logging
import ServiceLifecycle
import StepSignEngine
import StepSignStorage

/// The engine and its store as a service: first in the group (after the PostgreSQL pool), so the
/// last to stop. When the group shuts down, every request has been answered (the socket server
/// stopped before it); then the engine logs its last summary and checkpoints the ledger head
/// (SPEC §5.3), and the store closes. A group cancelled by a failure does the same, as far as
/// it can. On PostgreSQL the store's pool is a service of its own before this one
/// (``PostgresPoolService``): it closes its connections after this service ends.
struct EngineService: Service {
    let engine: Engine
    let store: any StepSignStore
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        // Not cancelled with the group: the last checkpoint is written even after a failure.
        await Task { [engine, store, logger] in
            await engine.shutdown()
            do { try await store.close() } catch {
                logger.warning("cannot close the store", metadata: ["error": "\(error)"])
            }
        }.value
        logger.notice("ledger checkpointed and store closed")
    }
}
