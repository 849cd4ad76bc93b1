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
import StepSignVersion
import UnixSignals

/// `stepsignd --config FILE [--socket PATH] [--state-dir DIR]` (SPEC §6).
@main
struct StepSignDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stepsignd",
        abstract: "The stepsign signing daemon: step-up authentication, ES256 signatures, a tamper-evident ledger.",
        version: StepSignVersion.current
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
        // Strict modes (SPEC §7): before anything in the state directory is opened, created or
        // tightened, and before the files the configuration names are read or run.
        do {
            try checkStrictModes(settings, stateDirectory: true)
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

        let notifier = SystemdNotifier.fromEnvironment()
        let passphrase: [UInt8]?
        do {
            passphrase = try KeyPassphraseCredential.load()
        } catch {
            FileHandleOutput.standardError("stepsignd: \(error)\n")
            throw ExitCode(78)  // EX_CONFIG
        }

        let store = try SQLiteStore.open(stateDirectory: settings.server.stateDir)
        let keyring: Keyring
        do {
            keyring = try await Keyring.open(directory: settings.server.stateDir + "/keys", instance: settings.instance,
                                             passphrase: passphrase,
                                             store: store, logger: logger)
        } catch let error as KeyringError {
            logger.critical("cannot load the signing keys", metadata: ["error": "\(error)"])
            throw ExitCode(78)  // EX_CONFIG: the keys or their passphrase credential do not match
        }
        let engine = try Engine(configuration: settings, store: store, keyring: keyring, logger: logger)
        let listener: SocketServer.Listener = SystemdListenFDs.inherited().map { .inherited(descriptor: $0) }
            ?? .path(settings.server.socket, mode: settings.server.socketMode, group: settings.server.socketGroup)
        let notify: @Sendable ([String]) -> Void = { fields in
            do { try notifier?.send(fields) } catch {
                logger.warning("cannot notify systemd", metadata: ["error": "\(error)"])
            }
        }
        let listening = switch listener {
        case let .path(path, _, _): "listening on \(path)"
        case let .inherited(descriptor): "listening on the socket systemd passed (fd \(descriptor))"
        }
        // READY=1 only now: the keys are loaded and the socket accepts connections.
        let server = SocketServer(engine: engine, listener: listener, logger: logger,
                                  onListening: { notify(["READY=1", "STATUS=\(listening)"]) })
        let group = ServiceGroup(configuration: .init(services: [.init(service: server)], logger: logger))
        logger.notice("starting", metadata: ["version": "\(Engine.version)", "stateDir": "\(settings.server.stateDir)",
                                             "activeKid": "\(keyring.active.kid)",
                                             "keysEncrypted": "\(passphrase != nil)"])
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            tasks.addTask {
                for await signal in signals {
                    if signal == .sighup {
                        notify(SystemdNotifier.reloadingFields(status: "reloading the configuration"))
                        let status = reload(engine: engine, logger: logger)
                        notify(["READY=1", "STATUS=\(status)"])
                    } else {
                        logger.notice("shutting down", metadata: ["signal": "\(signal)"])
                        notify(["STOPPING=1", "STATUS=stopping"])
                        // Keep listening: returning would end this group and cancel the
                        // services, dropping the replies of requests still in flight.
                        await group.triggerGracefulShutdown()
                    }
                }
            }
            if let notifier, notifier.watchdogInterval != nil {
                tasks.addTask {
                    // Returns only when cancelled, so it never ends the group by itself.
                    await notifier.runWatchdog { error in
                        logger.warning("cannot ping the systemd watchdog", metadata: ["error": "\(error)"])
                    }
                }
            }
            try await tasks.next()
            tasks.cancelAll()
        }
        // Every request has been answered: sign the ledger head one last time (SPEC §5.3).
        await engine.shutdown()
        logger.notice("stopped")
    }

    /// The configuration file with the command line's overrides applied.
    private func loadConfiguration() throws -> StepSignConfiguration {
        var settings = try StepSignConfiguration.load(contentsOf: config)
        if let socket { settings.server.socket = socket }
        if let stateDir { settings.server.stateDir = stateDir }
        return settings
    }

    /// Strict modes (SPEC §7): the configuration file and the files `settings` names, and,
    /// at start, the state directory with its database and keys (``StrictModes``).
    private func checkStrictModes(_ settings: StepSignConfiguration, stateDirectory: Bool) throws(StrictModesError) {
        let strict = StrictModes()
        try strict.checkConfigurationFile(config)
        try strict.checkReferencedFiles(of: settings)
        if stateDirectory {
            try strict.checkStateDirectory(settings.server.stateDir)
        }
    }

    /// SIGHUP: re-reads the configuration; a bad file, or one that strict modes refuse, keeps
    /// the one in force. Returns the
    /// outcome as a line for systemd's `STATUS=`.
    private func reload(engine: Engine, logger: Logger) -> String {
        do {
            let settings = try loadConfiguration()
            try checkStrictModes(settings, stateDirectory: false)
            try engine.reload(settings)
            LogLevelSwitch.shared.apply(settings.log)
            logger.notice("configuration reloaded", metadata: ["config": "\(config)"])
            return "configuration reloaded"
        } catch {
            logger.error("configuration not reloaded, keeping the one in force", metadata: ["error": "\(error)"])
            return "configuration not reloaded (see the log), keeping the one in force"
        }
    }
}
