import Logging
import ServiceLifecycle
import UnixSignals

/// The daemon's signals as a service: SIGHUP reloads the configuration (SPEC §7), SIGTERM and
/// SIGINT end the service, which shuts the group down gracefully (it runs with
/// `successTerminationBehavior: .gracefullyShutdownGroup`).
///
/// The signals are trapped by the caller before anything announces readiness, so one that
/// arrives while the daemon starts waits in `signals` instead of killing the process. Last in
/// the group: the first to stop, so that a second SIGTERM during shutdown changes nothing.
struct SignalService: Service {
    let signals: UnixSignalsSequence
    /// Reloads the configuration (with systemd's RELOADING=1 / READY=1 around it).
    let reload: @Sendable () async -> Void
    /// Announces the shutdown (log line, STOPPING=1).
    let stopping: @Sendable (UnixSignal) -> Void

    func run() async throws {
        for await signal in signals.cancelOnGracefulShutdown() {
            if signal == .sighup {
                await reload()
            } else {
                stopping(signal)
                return
            }
        }
    }
}
