extension StepSignConfiguration {
    /// The keys the daemon reads only when it starts (issue 39): the socket it listens on, the
    /// state directory, the store, the log's origin and tile directory, the metrics endpoint,
    /// and `instance` (the name its signing keys are registered under). A reload (SIGHUP)
    /// applies every other key; these keep the values the daemon started with until a restart.
    ///
    /// Each is a dotted key name as in the file and `ConfigError`s, with how to compare it and
    /// how to put the running value back.
    public struct RestartOnlyKey: Sendable {
        /// The key as the file names it (`metrics.listen`, `storage.postgresql.host`).
        public let name: String
        let differs: @Sendable (StepSignConfiguration, StepSignConfiguration) -> Bool
        let keep: @Sendable (inout StepSignConfiguration, StepSignConfiguration) -> Void

        init<Value: Equatable & Sendable>(_ name: String,
                                          _ get: @escaping @Sendable (StepSignConfiguration) -> Value,
                                          _ set: @escaping @Sendable (inout StepSignConfiguration, Value) -> Void) {
            self.name = name
            self.differs = { get($0) != get($1) }
            self.keep = { set(&$0, get($1)) }
        }
    }

    /// Every key read only at start, in the file's order.
    public static var restartOnlyKeys: [RestartOnlyKey] {
        [
            RestartOnlyKey("instance", { $0.instance }, { $0.instance = $1 }),
            RestartOnlyKey("server.socket", { $0.server.socket }, { $0.server.socket = $1 }),
            RestartOnlyKey("server.socket_mode", { $0.server.socketMode }, { $0.server.socketMode = $1 }),
            RestartOnlyKey("server.socket_group", { $0.server.socketGroup }, { $0.server.socketGroup = $1 }),
            RestartOnlyKey("server.state_dir", { $0.server.stateDir }, { $0.server.stateDir = $1 }),
            RestartOnlyKey("ledger.origin", { $0.ledger.origin }, { $0.ledger.origin = $1 }),
            RestartOnlyKey("ledger.tiles_dir", { $0.ledger.tilesDir }, { $0.ledger.tilesDir = $1 }),
            RestartOnlyKey("ssh_agent.socket", { $0.sshAgent.socket }, { $0.sshAgent.socket = $1 }),
            RestartOnlyKey("metrics.listen", { $0.metrics.listen }, { $0.metrics.listen = $1 }),
            RestartOnlyKey("signing.key_store", { $0.signing.keyStore }, { $0.signing.keyStore = $1 }),
            RestartOnlyKey("signing.pkcs11", { $0.signing.pkcs11 }, { $0.signing.pkcs11 = $1 }),
            RestartOnlyKey("storage.backend", { $0.storage.backend }, { $0.storage.backend = $1 }),
            RestartOnlyKey("storage.seal_key_file", { $0.storage.sealKeyFile }, { $0.storage.sealKeyFile = $1 }),
            RestartOnlyKey("storage.postgresql.host", { $0.storage.postgresql.host }, { $0.storage.postgresql.host = $1 }),
            RestartOnlyKey("storage.postgresql.port", { $0.storage.postgresql.port }, { $0.storage.postgresql.port = $1 }),
            RestartOnlyKey("storage.postgresql.database", { $0.storage.postgresql.database },
                           { $0.storage.postgresql.database = $1 }),
            RestartOnlyKey("storage.postgresql.user", { $0.storage.postgresql.user }, { $0.storage.postgresql.user = $1 }),
            RestartOnlyKey("storage.postgresql.password_file", { $0.storage.postgresql.passwordFile },
                           { $0.storage.postgresql.passwordFile = $1 }),
            RestartOnlyKey("storage.postgresql.tls", { $0.storage.postgresql.tls }, { $0.storage.postgresql.tls = $1 }),
            RestartOnlyKey("storage.postgresql.tls_ca_file", { $0.storage.postgresql.tlsCAFile },
                           { $0.storage.postgresql.tlsCAFile = $1 }),
            RestartOnlyKey("storage.postgresql.pool_size", { $0.storage.postgresql.poolSize },
                           { $0.storage.postgresql.poolSize = $1 }),
        ]
    }

    /// This configuration (read by a reload) as the running daemon can apply it: every key
    /// read only at start keeps its value in `running`, the configuration the daemon started
    /// with, and the names of those the file changed are returned, for the log line that says
    /// a restart is needed for them.
    public func applicable(whileRunning running: StepSignConfiguration) -> (configuration: StepSignConfiguration, needRestart: [String]) {
        var applied = self
        var changed: [String] = []
        for key in Self.restartOnlyKeys where key.differs(self, running) {
            changed.append(key.name)
            key.keep(&applied, running)
        }
        return (applied, changed)
    }
}
