import Logging
import ServiceLifecycle
import StepSignPostgres

/// The PostgreSQL store's connection pool as a service (issue 40): the first in the group, so
/// the group starts it before the start's work reads the store and stops it after every other
/// service, the engine's last checkpoint included. Told to shut down gracefully, PostgresNIO's
/// client closes its connections and the run ends.
struct PostgresPoolService: Service {
    let store: PostgresStore
    let logger: Logger

    func run() async {
        await store.runPool()
        logger.notice("PostgreSQL connections closed")
    }
}
