import Logging
import ServiceLifecycle

/// Pings systemd's watchdog (`WatchdogSec=`) until the group shuts down; during the stop
/// systemd's `TimeoutStopSec=` applies instead.
struct WatchdogService: Service {
    let notifier: SystemdNotifier
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown { [notifier, logger] in
            await notifier.runWatchdog { error in
                logger.warning("cannot ping the systemd watchdog", metadata: ["error": "\(error)"])
            }
        }
    }
}
