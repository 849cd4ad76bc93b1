extension StepSignConfiguration {
    /// `[storage]`: where the daemon keeps its state (SPEC §5, §6).
    public struct Storage: Sendable, Equatable {
        /// `backend`: "sqlite" (`state_dir/stepsign.sqlite`, one daemon) or "postgresql"
        /// (`[storage.postgresql]`, several daemons sharing one database). Default "sqlite".
        public enum Backend: String, Sendable, Equatable, CaseIterable {
            case sqlite
            case postgresql
        }

        public var backend: Backend
        /// `seal_key_file`: the cluster's seal key of the credential records on PostgreSQL (SPEC
        /// §5.4), one line of base64url of 32 bytes, the same on every host; "" (default): the
        /// systemd credential `stepsign-seal-key`. Not used on SQLite (`keys/seal.key`).
        public var sealKeyFile: String
        /// `[storage.postgresql]`: read whatever the backend, used only by "postgresql".
        public var postgresql: PostgreSQL

        public init(backend: Backend = .sqlite, sealKeyFile: String = "", postgresql: PostgreSQL = PostgreSQL()) {
            self.backend = backend
            self.sealKeyFile = sealKeyFile
            self.postgresql = postgresql
        }
    }
}

extension StepSignConfiguration.Storage {
    /// `[storage.postgresql]`: the database the daemons share. The password is never a key
    /// of the file: `password_file`, else the systemd credential `stepsign-db-password`.
    public struct PostgreSQL: Sendable, Equatable {
        /// `tls`: "disable", "require" or "verify-full" (TCP only).
        public enum TLS: String, Sendable, Equatable, CaseIterable {
            case disable
            case require
            case verifyFull = "verify-full"
        }

        /// `host`: a host name, an IP address, or (absolute) the directory of the server's Unix
        /// socket. Default "/run/postgresql".
        public var host: String
        /// `port`: 1 to 65535. Default 5432.
        public var port: Int
        /// `database`: default "stepsign"; not empty.
        public var database: String
        /// `user`: the role the daemon logs in as. Default "stepsign"; not empty.
        public var user: String
        /// `password_file`: "" (default): no password, or the systemd credential
        /// `stepsign-db-password` when `$CREDENTIALS_DIRECTORY` holds it; else an absolute
        /// path whose first line is the password.
        public var passwordFile: String
        /// `tls`: default "disable"; must be "disable" when `host` is a socket directory.
        public var tls: TLS
        /// `tls_ca_file`: "" (default): the system's roots; else an absolute path to PEM CA
        /// certificates for "verify-full".
        public var tlsCAFile: String
        /// `pool_size`: connections the daemon keeps open at most. Default 8; 1 to 1000.
        public var poolSize: Int

        public init(
            host: String = "/run/postgresql", port: Int = 5432, database: String = "stepsign",
            user: String = "stepsign", passwordFile: String = "", tls: TLS = .disable, tlsCAFile: String = "",
            poolSize: Int = 8
        ) {
            self.host = host
            self.port = port
            self.database = database
            self.user = user
            self.passwordFile = passwordFile
            self.tls = tls
            self.tlsCAFile = tlsCAFile
            self.poolSize = poolSize
        }

        /// Whether `host` names a Unix socket directory.
        public var usesUnixSocket: Bool { host.hasPrefix("/") }
    }
}

extension StepSignConfiguration.Storage {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown(["backend", "seal_key_file", "postgresql"])
        let names = Backend.allCases.map(\.rawValue)
        let text = try t.string("backend", default: Backend.sqlite.rawValue) { s in
            Backend(rawValue: s) == nil ? "expected one of \(names.joined(separator: ", ")), found \(TOMLValue.quoted(s))" : nil
        }
        self.init(
            backend: Backend(rawValue: text) ?? .sqlite,
            sealKeyFile: try t.string("seal_key_file", default: "") { s in s.isEmpty ? nil : Check.absolutePath(s) },
            postgresql: try PostgreSQL(try t.table("postgresql"))
        )
    }
}

extension StepSignConfiguration.Storage.PostgreSQL {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        for secret in ["password", "passwd", "pass"] where t.table[secret] != nil {
            throw t.error(
                secret, t.table[secret],
                "the database password is never in the config file: put it in a file named by password_file, or in the systemd credential stepsign-db-password")
        }
        try t.rejectUnknown(["host", "port", "database", "user", "password_file", "tls", "tls_ca_file", "pool_size"])
        let d = Self()
        let host = try t.string("host", default: d.host) { s in
            if let complaint = Check.nonEmptyLine(s) { return complaint }
            if s.hasPrefix("/") { return nil }
            return s.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0 == "/" })
                ? "expected a host name, an IP address or an absolute socket directory, found \(TOMLValue.quoted(s))" : nil
        }
        let port = try t.integer("port", default: d.port, in: 1...65535)
        if host.hasPrefix("/") {
            let socket = (host.hasSuffix("/") ? host : host + "/") + ".s.PGSQL.\(port)"
            if socket.utf8.count > 107 {
                throw t.error("host", t.table["host"], "the socket path \(socket) is longer than 107 bytes (sun_path)")
            }
        }
        let names = TLS.allCases.map(\.rawValue)
        let tlsText = try t.string("tls", default: d.tls.rawValue) { s in
            TLS(rawValue: s) == nil ? "expected one of \(names.joined(separator: ", ")), found \(TOMLValue.quoted(s))" : nil
        }
        let tls = TLS(rawValue: tlsText) ?? .disable
        if host.hasPrefix("/"), tls != .disable {
            throw t.error("tls", t.table["tls"], "applies to TCP only; host is a Unix socket directory, so tls must be \"disable\"")
        }
        let tlsCAFile = try t.string("tls_ca_file", default: d.tlsCAFile) { s in s.isEmpty ? nil : Check.absolutePath(s) }
        if !tlsCAFile.isEmpty, tls != .verifyFull {
            throw t.error("tls_ca_file", t.table["tls_ca_file"], "is used only with tls = \"verify-full\"")
        }
        self.init(
            host: host,
            port: port,
            database: try t.string("database", default: d.database, check: Check.nonEmptyLine),
            user: try t.string("user", default: d.user, check: Check.nonEmptyLine),
            passwordFile: try t.string("password_file", default: d.passwordFile) { s in
                s.isEmpty ? nil : Check.absolutePath(s)
            },
            tls: tls,
            tlsCAFile: tlsCAFile,
            poolSize: try t.integer("pool_size", default: d.poolSize, in: 1...1000)
        )
    }
}
