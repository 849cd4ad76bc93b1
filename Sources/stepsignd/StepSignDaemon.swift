#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import CSystemShims
import Logging
import ServiceLifecycle
import StepSignConfig
import StepSignEngine
import StepSignServer
import StepSignStorage
import UnixSignals

/// `stepsignd --config FILE [--socket PATH] [--state-dir DIR]` (SPEC §6).
@main
struct StepSignDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stepsignd",
        abstract: "The stepsign signing daemon: step-up authentication, ES256 signatures, a tamper-evident ledger."
    )

    @Option(name: .long, help: "The TOML configuration file.")
    var config: String = "/etc/stepsign/stepsignd.toml"

    @Option(name: .long, help: "The Unix socket to listen on (overrides server.socket).")
    var socket: String?

    @Option(name: .customLong("state-dir"), help: "The state directory (overrides server.state_dir).")
    var stateDir: String?

    func run() async throws {
        umask(0o077)
        // No core dumps and no ptrace by other processes of the same user: memory holds keys.
        guard stepsign_set_non_dumpable() == 0 else {
            FileHandleOutput.standardError("stepsignd: cannot mark the process non-dumpable\n")
            throw ExitCode(71)  // EX_OSERR
        }

        let settings: StepSignConfiguration
        do {
            settings = try loadConfiguration()
        } catch {
            FileHandleOutput.standardError("stepsignd: \(error)\n")
            throw ExitCode(78)  // EX_CONFIG
        }
        // Trap the signals before anything can announce readiness: a SIGTERM that arrives
        // once the socket listens must shut down gracefully, not kill the process.
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint, .sighup)

        LogLevelSwitch.shared.apply(settings.log)
        LoggingSystem.bootstrap { label in SwitchedLogHandler(LogfmtLogHandler(label: label)) }
        let logger = Logger(label: "stepsignd")

        let store = try SQLiteStore.open(stateDirectory: settings.server.stateDir)
        let keyring = try await Keyring.open(directory: settings.server.stateDir + "/keys", passphrase: nil,
                                             store: store, logger: logger)
        let engine = try Engine(configuration: settings, store: store, keyring: keyring, logger: logger)
        let listener: SocketServer.Listener = SystemdListenFDs.inherited().map { .inherited(descriptor: $0) }
            ?? .path(settings.server.socket, mode: settings.server.socketMode, group: settings.server.socketGroup)
        let server = SocketServer(engine: engine, listener: listener, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [.init(service: server)], logger: logger))
        logger.notice("starting", metadata: ["version": "\(Engine.version)", "stateDir": "\(settings.server.stateDir)",
                                             "activeKid": "\(keyring.active.kid)"])
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            tasks.addTask {
                for await signal in signals {
                    if signal == .sighup {
                        reload(engine: engine, logger: logger)
                    } else {
                        logger.notice("shutting down", metadata: ["signal": "\(signal)"])
                        // Keep listening: returning would end this group and cancel the
                        // services, dropping the replies of requests still in flight.
                        await group.triggerGracefulShutdown()
                    }
                }
            }
            try await tasks.next()
            tasks.cancelAll()
        }
        logger.notice("stopped")
    }

    /// The configuration file with the command line's overrides applied.
    private func loadConfiguration() throws -> StepSignConfiguration {
        var settings = try StepSignConfiguration.load(contentsOf: config)
        if let socket { settings.server.socket = socket }
        if let stateDir { settings.server.stateDir = stateDir }
        return settings
    }

    /// SIGHUP: re-reads the configuration; a bad file keeps the one in force.
    private func reload(engine: Engine, logger: Logger) {
        do {
            let settings = try loadConfiguration()
            try engine.reload(settings)
            LogLevelSwitch.shared.apply(settings.log)
            logger.notice("configuration reloaded", metadata: ["config": "\(config)"])
        } catch {
            logger.error("configuration not reloaded, keeping the one in force", metadata: ["error": "\(error)"])
        }
    }
}
