#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import class Foundation.ProcessInfo
internal import CSystemShims
import Logging
import ServiceLifecycle
import StepSignConfig
import StepSignCrypto
import StepSignEngine
import StepSignPostgres
import StepSignServer
import StepSignStorage
import StepSignVersion
import UnixSignals
import Metrics
import Prometheus
import StepSignMetricsServer

/// `stepsignd --config FILE [--socket PATH] [--state-dir DIR]` (SPEC §6), and
/// `stepsignd --check [--config FILE]` (SPEC §8, ``ConfigurationCheck``).
struct StepSignDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stepsignd",
        abstract: "The stepsign signing daemon: step-up authentication, ES256 signatures, a tamper-evident ledger.",
        discussion: """
            stepsignd reads its configuration (--config, default /etc/stepsign/stepsignd.toml), loads its keys \
            from the state directory, opens its database and serves the Unix socket. A bad configuration is \
            refused at start with exit status 78 (EX_CONFIG), naming the file, line and key; SIGHUP reloads it, \
            and a bad file then keeps the one in force. An I/O fault at start that may pass (EIO, a full disk, \
            too many open files) exits 74 (EX_IOERR), naming the path, which systemd restarts; 78 it does not.

            stepsignd --check [--config FILE] reads the configuration and everything it names as a start \
            would, without listening, without taking the state directory's lock and without creating, \
            migrating or changing any file, so it may run beside the daemon: the key files and the key \
            passphrase credential ($CREDENTIALS_DIRECTORY/stepsign-key-passphrase), the strict modes of the \
            configuration file, the state directory, its database, keys/ and every file the configuration \
            names (IDV keys, common-password list, notifier program, PostgreSQL password, seal key and CA \
            files, cluster root key, PKCS#11 module and PIN file), the witness keys, the directory of the \
            SSH agent's socket, the PKCS#11 token (the module loads, the token is found, the PIN logs in, and \
            the keys keys/ names are in it; nothing is made in it), and the database: the SQLite file's \
            schema, or whether PostgreSQL can be reached and its schema. Each problem is printed on standard error \
            as FILE:LINE: KEY: what is wrong, and the exit status is 78; with none, one line on standard \
            output says the configuration is ok, and the exit status is 0. No secret is printed. \
            Run it as the daemon's user (strict modes expect the state to be that user's), with the \
            daemon's credentials: the systemd unit's ExecReload= runs it so, first, so a bad file never \
            reaches a reload. With --for-reload it skips what a reload does not open again (keys read only \
            at start, which a reload keeps): whether PostgreSQL can be reached, and the PKCS#11 token's \
            login; everything a reload applies, and every file the configuration names, is still checked.
            """,
        version: StepSignVersion.current
    )

    @Option(name: .long, help: "The TOML configuration file.")
    var config: String = "/etc/stepsign/stepsignd.toml"

    @Option(name: .long, help: "The Unix socket to listen on (overrides server.socket).")
    var socket: String?

    @Option(name: .customLong("state-dir"), help: "The state directory (overrides server.state_dir).")
    var stateDir: String?

    @Option(name: .customLong("migrate-to"),
            help: ArgumentHelp("Copy the SQLite store into the database of [storage.postgresql], verify it, and exit "
                               + "(what `stepsign admin migrate --to postgresql` runs).", valueName: "postgresql"))
    var migrateTo: String?

    @Flag(name: .long, help: "With --migrate-to: print the summary as JSON.")
    var json = false

    @Flag(name: .long,
          help: ArgumentHelp("Check the configuration and everything it names, print each problem as FILE:LINE: KEY: what, "
                             + "and exit 0 (all is well) or 78; changes nothing, and may run beside the daemon."))
    var check = false

    @Flag(name: .customLong("for-reload"),
          help: ArgumentHelp("With --check: as before a reload (ExecReload=), skip what a reload does not open again: "
                             + "PostgreSQL's reachability and the PKCS#11 token's login."))
    var forReload = false

    func validate() throws {
        if let migrateTo, migrateTo != "postgresql" {
            throw ValidationError("--migrate-to takes \"postgresql\" only")
        }
        if json, migrateTo == nil { throw ValidationError("--json goes with --migrate-to") }
        if check, migrateTo != nil { throw ValidationError("--check and --migrate-to go alone") }
        if forReload, !check { throw ValidationError("--for-reload goes with --check") }
    }

    func run() async throws {
        umask(0o077)
        // No core dumps and no ptrace by other processes of the same user: memory holds keys.
        guard stepsign_set_non_dumpable() == 0 else {
            FileHandleOutput.standardError("stepsignd: cannot mark the process non-dumpable\n")
            throw ExitCode(71)  // EX_OSERR
        }
        if check {
            let status = await ConfigurationCheck(configPath: config, socket: socket, stateDirectory: stateDir,
                                                  environment: ProcessInfo.processInfo.environment, forReload: forReload).run()
            if status != 0 { throw ExitCode(status) }
            return
        }

        let settings: StepSignConfiguration
        let configurationDigest: [UInt8]
        do {
            (settings, configurationDigest) = try loadConfigurationWithDigest()
        } catch {
            // A read that failed with a fault that may pass (the log is not set up yet: said
            // on standard error, which is the journal under systemd).
            if migrateTo == nil, let fault = TransientFault(error) {
                FileHandleOutput.standardError("stepsignd: \(fault.path ?? config): \(fault.reason) (exit 74: a fault that may pass)\n")
                throw ExitCode(TransientStartFault.exitStatus)
            }
            FileHandleOutput.standardError("stepsignd: \(error)\n")
            throw ExitCode(migrateTo == nil ? 78 : StoreMigrationRun.badInput)  // EX_CONFIG
        }
        if migrateTo != nil {
            let status = await StoreMigrationRun(configPath: config, settings: settings, json: json).run()
            if status != 0 { throw ExitCode(status) }
            return
        }
        // A socket systemd passes is bound already; otherwise the daemon creates one by path.
        let inheritedSockets = SystemdListenFDs.inherited()
        let inheritedSocket = inheritedSockets.main
        // The log, before the first step that may fail with a fault that may pass (exit 74 says
        // so at critical, ``TransientStartFault``).
        LogLevelSwitch.shared.apply(settings.log)
        // Under systemd (stderr is the journal) each line also carries fields, through the
        // journal's native protocol; elsewhere logfmt lines on stderr.
        if JournalSocket.stderrIsTheJournal(environment: ProcessInfo.processInfo.environment), let journal = JournalSocket() {
            LoggingSystem.bootstrap { label in SwitchedLogHandler(JournalLogHandler(label: label, journal: journal)) }
        } else {
            LoggingSystem.bootstrap { label in SwitchedLogHandler(LogfmtLogHandler(label: label)) }
        }
        let logger = Logger(label: "stepsignd")
        // Strict modes (SPEC §7): before anything in the state directory is opened, created or
        // tightened, before the files the configuration names are read or run, and before the
        // socket is created in its directory.
        do {
            try checkStrictModes(settings, stateDirectory: true, socket: inheritedSocket == nil ? settings.server.socket : nil)
        } catch {
            if let exit = TransientStartFault.exit(for: error, step: "strict modes: cannot check a file", path: config,
                                                   logger: logger) { throw exit }
            FileHandleOutput.standardError("stepsignd: \(error)\n")
            throw ExitCode(78)  // EX_CONFIG
        }
        // One daemon per state directory (issue 39): made if missing and locked before the
        // socket is created and before the store or the keys are opened; held until the end.
        let stateLock: StateDirectoryLock
        do {
            stateLock = try StateDirectoryLock.take(stateDirectory: settings.server.stateDir)
        } catch {
            if let exit = TransientStartFault.exit(for: error, step: "cannot take the state directory's lock",
                                                   path: settings.server.stateDir, logger: logger) { throw exit }
            FileHandleOutput.standardError("stepsignd: \(error)\n")
            throw ExitCode(78)  // EX_CONFIG
        }
        defer { withExtendedLifetime(stateLock) {} }
        // Trap the signals before anything can announce readiness: a SIGTERM that arrives
        // once the socket listens must shut down gracefully, not kill the process.
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint, .sighup)

        // Metrics (issue 27), before anything makes a handle: off unless `[metrics] listen` is set.
        let metricsRegistry = Self.bootstrapMetrics(settings.metrics)

        let notifier = SystemdNotifier.fromEnvironment()
        let passphrase: [UInt8]?
        do {
            passphrase = try KeyPassphraseCredential.load()
        } catch {
            if let exit = TransientStartFault.exit(for: error, step: "cannot read the key passphrase credential",
                                                   path: KeyPassphraseCredential.name, logger: logger) { throw exit }
            FileHandleOutput.standardError("stepsignd: \(error)\n")
            throw ExitCode(78)  // EX_CONFIG
        }

        let clusterRoot: P256PublicKey?
        do {
            clusterRoot = try settings.cluster.loadRootKey()
            _ = try settings.loadWitnessKeys()
        } catch {
            FileHandleOutput.standardError("stepsignd: \(error)\n")
            throw ExitCode(78)  // EX_CONFIG
        }
        // The PKCS#11 token (SPEC §5.7): loaded, found and logged in to before anything else
        // opens, so that a missing module, token or a wrong PIN is a clear start error (78).
        var token: PKCS11Token?
        if settings.signing.keyStore == .pkcs11 {
            let pkcs11 = settings.signing.pkcs11
            do {
                var pin = try PKCS11PINCredential.load(pkcs11)
                defer { KeyPassphraseCredential.wipe(&pin) }
                token = try PKCS11Token(modulePath: pkcs11.module, label: pkcs11.tokenLabel, pin: pin,
                                        maxSessions: pkcs11.maxSessions)
            } catch {
                logger.critical("cannot open the PKCS#11 token", metadata: ["module": "\(pkcs11.module)",
                                                                            "token": "\(pkcs11.tokenLabel)", "error": "\(error)"])
                FileHandleOutput.standardError("stepsignd: the PKCS#11 token: \(error)\n")
                throw ExitCode(78)  // EX_CONFIG
            }
        }
        let store = try await openStore(settings, logger: logger)
        // The daemon's one service group (issue 40). On PostgreSQL it begins here with the store's
        // connection pool alone, since the start's work below uses the store; the other services
        // join it once the start has succeeded, after the pool, so that a graceful shutdown stops
        // them first and the pool last. A start that fails leaves this scope, which cancels the
        // group (the pool closes its connections) and waits for it.
        let storeServices: [ServiceGroupConfiguration.ServiceConfiguration] = (store as? PostgresStore).map {
            [.init(service: PostgresPoolService(store: $0, logger: logger))]
        } ?? []
        let group = ServiceGroup(configuration: .init(services: storeServices, logger: logger))
        async let groupRun: Void = Self.run(group, if: !storeServices.isEmpty)
        let keyring: Keyring
        do {
            keyring = try await Keyring.open(directory: settings.server.stateDir + "/keys", instance: settings.instance,
                                             passphrase: passphrase, store: store, clusterRoot: clusterRoot,
                                             token: token, logger: logger)
        } catch let error as KeyringError {
            if let exit = TransientStartFault.exit(for: error, step: "cannot load the signing keys",
                                                   path: settings.server.stateDir + "/keys", logger: logger) {
                try? await store.close()
                throw exit
            }
            logger.critical("cannot load the signing keys", metadata: ["error": "\(error)"])
            FileHandleOutput.standardError("stepsignd: cannot load the signing keys: \(error)\n")
            try? await store.close()
            throw ExitCode(78)  // EX_CONFIG: the keys or their passphrase credential do not match
        } catch {
            // The keys directory itself unreadable (opendir failing: EIO): said and refused as
            // a key file that cannot be read is (scripts/crash-matrix found it ending with
            // ArgumentParser's bare `Error: opendir …`, exit 1, nothing in the log); a fault that
            // may pass (EIO there, or the store's disk I/O error) exits 74.
            if let exit = TransientStartFault.exit(for: error, step: "cannot load the signing keys",
                                                   path: settings.server.stateDir + "/keys", logger: logger) {
                try? await store.close()
                throw exit
            }
            logger.critical("cannot load the signing keys", metadata: ["error": "\(error)"])
            FileHandleOutput.standardError("stepsignd: cannot load the signing keys: \(error)\n")
            try? await store.close()
            throw ExitCode(78)  // EX_CONFIG
        }
        // One log, one origin (SPEC §5.5): the stored one, or this daemon's if it is the first.
        let logOrigin: String
        do {
            logOrigin = try await Engine.claimLogOrigin(configuration: settings, store: store)
        } catch let error as LogOriginMismatch {
            logger.critical("the log has another origin", metadata: ["error": "\(error)"])
            FileHandleOutput.standardError("stepsignd: \(error)\n")
            try? await store.close()
            throw ExitCode(78)  // EX_CONFIG
        } catch {
            if let exit = TransientStartFault.exit(for: error, step: "cannot read the log's origin",
                                                   path: storeLocation(settings), logger: logger) {
                try? await store.close()
                throw exit
            }
            logger.critical("cannot read the log's origin", metadata: ["error": "\(error)"])
            try? await store.close()
            throw ExitCode(69)  // EX_UNAVAILABLE: systemd retries
        }
        let engine: Engine
        do {
            engine = try Engine(configuration: settings, store: store, keyring: keyring, logger: logger, logOrigin: logOrigin)
        } catch {
            try? await store.close()
            if let exit = TransientStartFault.exit(for: error, step: "cannot start the engine", path: settings.server.stateDir,
                                                   logger: logger) { throw exit }
            throw error
        }
        // The start is the first event of this run in the ledger: the key made, if any, and
        // the configuration loaded (SPEC §5.4). A database that refuses it stops the start.
        do {
            try await engine.recordStart(configurationSHA256: configurationDigest)
        } catch {
            if let exit = TransientStartFault.exit(for: error, step: "cannot record the start in the ledger",
                                                   path: storeLocation(settings), logger: logger) {
                try? await store.close()
                throw exit
            }
            logger.critical("cannot record the start in the ledger", metadata: ["error": "\(error)"])
            try? await store.close()
            throw ExitCode(69)  // EX_UNAVAILABLE: systemd retries
        }
        let listener: SocketServer.Listener = inheritedSocket.map { .inherited(descriptor: $0) }
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
        let metricsServer: MetricsHTTPServer?
        do {
            metricsServer = try await Self.bindMetrics(settings, registry: metricsRegistry, logger: logger)
        } catch {
            logger.critical("cannot listen for metrics ([metrics] listen)", metadata: ["error": "\(error)"])
            FileHandleOutput.standardError("stepsignd: cannot listen for metrics: \(error)\n")
            try? await store.close()
            throw ExitCode(78)  // EX_CONFIG
        }
        // The SSH agent (SPEC §3.5): the socket systemd passed as `agent`, else `[ssh_agent] socket`,
        // bound now, before the main socket is (a socket's mode is set through the process's umask).
        // The agent is off unless `[ssh_agent] socket` is set (SPEC §6): a socket systemd passes
        // for it otherwise would only keep its clients waiting, so that is refused as a bad file is.
        if inheritedSockets.agent != nil, !settings.sshAgent.enabled {
            let problem = "systemd passed the SSH agent's socket (stepsignd-agent.socket), but [ssh_agent] socket is empty: "
                + "set it to the socket unit's ListenStream= path"
            logger.critical("cannot serve the SSH agent", metadata: ["error": .string(problem)])
            FileHandleOutput.standardError("stepsignd: \(problem)\n")
            try? await store.close()
            throw ExitCode(78)  // EX_CONFIG
        }
        var agentServer: SSHAgentServer?
        if settings.sshAgent.enabled {
            let agentListener: SocketServer.Listener = inheritedSockets.agent.map { .inherited(descriptor: $0) }
                ?? .path(settings.sshAgent.socket, mode: settings.server.socketMode, group: settings.server.socketGroup)
            do {
                agentServer = try await SSHAgentServer.bind(engine: engine, listener: agentListener, logger: logger)
            } catch {
                logger.critical("cannot listen for the SSH agent ([ssh_agent] socket)", metadata: ["error": "\(error)"])
                FileHandleOutput.standardError("stepsignd: \(error)\n")
                try? await store.close()
                throw ExitCode(78)  // EX_CONFIG
            }
        }
        // The group's order, after the store's pool, is the shutdown order, reversed: the signals
        // stop first, then the socket server (every request in flight is answered), the watchdog,
        // the summary and approval-expiry timers, the engine (final checkpoint) and the store, and
        // last the pool. A service that fails shuts the group down gracefully in this order too
        // (a cancelled group would end the pool while the engine writes its last checkpoint),
        // and the group then throws its error.
        func service(_ service: some Service) -> ServiceGroupConfiguration.ServiceConfiguration {
            .init(service: service, failureTerminationBehavior: .gracefullyShutdownGroup)
        }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            service(EngineService(engine: engine, store: store, logger: logger)),
            service(SigningSummaryService(engine: engine)),
            service(ApprovalExpiryService(engine: engine)),
        ]
        if let notifier, notifier.watchdogInterval != nil {
            services.append(service(WatchdogService(notifier: notifier, logger: logger)))
        }
        if let metricsServer { services.append(service(metricsServer)) }
        services.append(service(server))
        if let agentServer { services.append(service(agentServer)) }
        services.append(.init(
            service: SignalService(
                signals: signals,
                reload: {
                    notify(SystemdNotifier.reloadingFields(status: "reloading the configuration"))
                    let status = await reload(engine: engine, started: settings, logger: logger)
                    notify(["READY=1", "STATUS=\(status)"])
                },
                stopping: { signal in
                    logger.notice("shutting down", metadata: ["signal": "\(signal)"])
                    notify(["STOPPING=1", "STATUS=stopping"])
                }),
            successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup))
        logger.notice("starting", metadata: ["version": "\(Engine.version)", "stateDir": "\(settings.server.stateDir)",
                                             "storage": "\(settings.storage.backend.rawValue)",
                                             "activeKid": "\(keyring.active.kid)",
                                             "keysEncrypted": "\(passphrase != nil)"])
        for service in services { await group.addServiceUnlessShutdown(service) }
        do {
            if storeServices.isEmpty { try await group.run() }
            try await groupRun
        } catch let error as ServerError {
            // The socket cannot be made where the configuration says: a restart cannot fix it.
            logger.critical("cannot listen", metadata: ["error": "\(error)"])
            FileHandleOutput.standardError("stepsignd: \(error)\n")
            throw ExitCode(78)  // EX_CONFIG
        }
        logger.notice("stopped")
    }

    /// Where the store is, for a log line: the SQLite database file, or PostgreSQL's server and
    /// database.
    private func storeLocation(_ settings: StepSignConfiguration) -> String {
        switch settings.storage.backend {
        case .sqlite: settings.server.stateDir + "/" + SQLiteStore.fileName
        case .postgresql: "PostgreSQL database \(settings.storage.postgresql.database)"
        }
    }

    /// Runs `group` if `now`: the daemon's group when it begins before the start's work (on
    /// PostgreSQL, with the store's pool); otherwise the group runs once the start is done.
    private static func run(_ group: ServiceGroup, if now: Bool) async throws {
        if now { try await group.run() }
    }

    /// Opens the configured store (SPEC §5, `[storage]`). PostgreSQL: settings that cannot
    /// work or a schema newer than this daemon exit 78 (a restart cannot fix them); a server
    /// that cannot be reached or refuses the daemon otherwise exits 69 (EX_UNAVAILABLE), which
    /// systemd's `Restart=on-failure` retries.
    private func openStore(_ settings: StepSignConfiguration, logger: Logger) async throws -> any StepSignStore {
        switch settings.storage.backend {
        case .sqlite:
            try SQLiteStore.ensureStateDirectory(settings.server.stateDir)
            do {
                let (seal, created) = try SealKey.stateKey(stateDirectory: settings.server.stateDir)
                return try SQLiteStore.open(stateDirectory: settings.server.stateDir, seal: seal, sealUnsealed: created)
            } catch StorageError.sealKeyMismatch {
                logger.critical("""
                    keys/seal.key is not the key this database's credential records were sealed with: \
                    restore it from the backup that holds the database (SPEC 5.4)
                    """)
                throw ExitCode(78)  // EX_CONFIG
            } catch let error as SealKeyError {
                logger.critical("cannot use the seal key", metadata: ["error": "\(error)"])
                throw ExitCode(78)
            } catch {
                // A database file that is not one, or one the daemon cannot create: the state
                // directory must be repaired; a restart changes nothing (issue 39: this printed
                // `Error: SQLite error 26: …` and exited 1).
                let path = settings.server.stateDir + "/" + SQLiteStore.fileName
                if let exit = TransientStartFault.exit(for: error, step: "cannot open the SQLite store", path: path,
                                                       logger: logger) { throw exit }
                // The file that failed: the database, or its -wal or -shm (SQLiteStore.readWriteFault).
                let reason = if case let StorageError.stateFile(file, code) = error {
                    (file == path ? "" : "\(file): ") + String(cString: strerror(code))
                } else {
                    "\(error)"
                }
                logger.critical("cannot open the SQLite store", metadata: ["path": "\(path)", "error": "\(reason)"])
                FileHandleOutput.standardError("stepsignd: cannot open the SQLite store \(path): \(reason)\n")
                throw ExitCode(78)  // EX_CONFIG
            }
        case .postgresql:
            // The signing keys stay in the state directory (SPEC §5.2).
            try SQLiteStore.ensureStateDirectory(settings.server.stateDir)
            let seal: CredentialSeal
            do {
                seal = try SealKey.clusterKey(file: settings.storage.sealKeyFile,
                                              environment: ProcessInfo.processInfo.environment)
            } catch {
                if let exit = TransientStartFault.exit(for: error, step: "cannot read the cluster's seal key",
                                                       path: settings.storage.sealKeyFile, logger: logger) { throw exit }
                logger.critical("cannot read the cluster's seal key", metadata: ["error": "\(error)"])
                throw ExitCode(78)  // EX_CONFIG
            }
            let pg = settings.storage.postgresql
            let configuration = PostgresStoreConfiguration(pg)
            let target = pg.usesUnixSocket ? configuration.unixSocketPath : "\(pg.host):\(pg.port)"
            let metadata: Logger.Metadata = ["server": "\(target)", "database": "\(pg.database)", "user": "\(pg.user)"]
            do {
                // The pool runs as the first service of the daemon's group (PostgresPoolService).
                let store = try await PostgresStore.open(configuration, seal: seal, logger: Logger(label: "stepsign.postgres"),
                                                         pool: .caller)
                logger.notice("PostgreSQL store open", metadata: metadata)
                return store
            } catch let error as PostgresStoreError {
                var fields = metadata
                fields["error"] = "\(error)"
                switch error {
                case .schemaTooNew, .migrationNotPermitted, .configuration, .passwordFile, .sealNotPermitted:
                    logger.critical("cannot use the PostgreSQL store", metadata: fields)
                    throw ExitCode(78)  // EX_CONFIG
                case .tls:
                    // The certificate, the CA file, the host name or the server's TLS setup must change.
                    logger.critical("cannot use TLS with PostgreSQL (check tls, tls_ca_file and host)", metadata: fields)
                    throw ExitCode(78)  // EX_CONFIG
                case .server where error.refusesLoginOrDatabase:
                    // Login refused or no such database: the settings (or the server's) must change.
                    logger.critical("PostgreSQL refuses the daemon's login or database", metadata: fields)
                    throw ExitCode(78)  // EX_CONFIG
                case .unavailable, .server, .closed:
                    logger.critical("cannot reach PostgreSQL; systemd retries (Restart=on-failure)", metadata: fields)
                    throw ExitCode(69)  // EX_UNAVAILABLE
                }
            } catch let exit as ExitCode {
                throw exit
            } catch StorageError.sealKeyMismatch {
                logger.critical("""
                    the seal key is not the one this database's credential records were sealed with: every host \
                    needs the same storage.seal_key_file or stepsign-seal-key credential (SPEC 5.4)
                    """, metadata: metadata)
                throw ExitCode(78)  // EX_CONFIG
            } catch {
                logger.critical("cannot open the PostgreSQL store", metadata: metadata.merging(["error": "\(error)"]) { $1 })
                throw ExitCode(69)  // EX_UNAVAILABLE
            }
        }
    }

    /// The configuration file with the command line's overrides applied, and the SHA-256 of
    /// the bytes it was parsed from (recorded in the ledger, SPEC §5.4).
    private func loadConfigurationWithDigest() throws -> (configuration: StepSignConfiguration, sha256: [UInt8]) {
        var (settings, text) = try StepSignConfiguration.loadWithText(contentsOf: config)
        if let socket { settings.server.socket = socket }
        if let stateDir { settings.server.stateDir = stateDir }
        return (settings, SHA256.hash(Array(text.utf8)))
    }

    /// Strict modes (SPEC §7): the configuration file and the files `settings` names, and,
    /// at start, the state directory with its database and keys and the directory of the
    /// `socket` the daemon will create (nil: systemd passed one) (``StrictModes``).
    private func checkStrictModes(_ settings: StepSignConfiguration, stateDirectory: Bool,
                                  socket: String? = nil) throws(StrictModesError) {
        let strict = StrictModes()
        try strict.checkConfigurationFile(config)
        try strict.checkReferencedFiles(of: settings)
        if stateDirectory {
            try strict.checkStateDirectory(settings.server.stateDir)
        }
        if let socket {
            try strict.checkSocketDirectory(of: socket)
        }
    }

    /// SIGHUP: re-reads the configuration; a bad file, or one that strict modes refuse, keeps
    /// the one in force. The keys read only at start keep the values the daemon `started` with
    /// (``StepSignConfiguration/restartOnlyKeys``), and the log line names those the file
    /// changed, which need a restart (issue 39). Returns the outcome as a line for systemd's
    /// `STATUS=`.
    private func reload(engine: Engine, started: StepSignConfiguration, logger: Logger) async -> String {
        do {
            let (read, digest) = try loadConfigurationWithDigest()
            try checkStrictModes(read, stateDirectory: false)
            let (settings, needRestart) = read.applicable(whileRunning: started)
            try await engine.reload(settings, sha256: digest)
            LogLevelSwitch.shared.apply(settings.log)
            guard !needRestart.isEmpty else {
                logger.notice("configuration reloaded", metadata: ["config": "\(config)"])
                return "configuration reloaded"
            }
            let keys = needRestart.joined(separator: ",")
            logger.warning("configuration reloaded", metadata: ["config": "\(config)", "restartNeededFor": "\(keys)"])
            return "configuration reloaded; a restart is needed for \(needRestart.joined(separator: ", "))"
        } catch {
            logger.error("configuration not reloaded, keeping the one in force", metadata: ["error": "\(error)"])
            return "configuration not reloaded (see the log), keeping the one in force"
        }
    }
}
