#if canImport(Glibc)
import Glibc
#endif
import StepSignConfig
import StepSignCrypto
import StepSignEngine
import StepSignPostgres
import StepSignStorage

// The checks of `stepsignd --check`, in the order the start meets what they check. Each reads
// only; each reports every problem it finds, naming the key that leads to it.

extension ConfigurationCheck {
    static let steps: [Step] = [
        configurationFile,
        referencedFiles,
        stateDirectory,
        socketDirectory,
        sshAgentSocket,
        keys,
        database,
    ]

    /// Strict modes of the configuration file itself.
    static func configurationFile(_ context: CheckContext) async -> [CheckFinding] {
        do {
            try StrictModes().checkConfigurationFile(context.configPath)
            return []
        } catch {
            return [context.problem(nil, "\(error)")]
        }
    }

    /// Every file the configuration names (``StrictModes/referencedFiles(of:)``): its strict
    /// modes, then its contents read as the daemon reads them, and a notifier that can run.
    static func referencedFiles(_ context: CheckContext) async -> [CheckFinding] {
        let strict = StrictModes()
        var findings: [CheckFinding] = []
        var refused: Set<String> = []
        for file in StrictModes.referencedFiles(of: context.settings) {
            do {
                try strict.checkReferencedFile(file)
            } catch {
                findings.append(context.problem(file.key, "\(error)"))
                refused.insert(file.key)
            }
        }
        let settings = context.settings
        // The contents, of the files strict modes let through (a missing one is named once).
        func read(_ key: String, _ load: () throws -> Void) {
            guard !refused.contains(key) else { return }
            do { try load() } catch { findings.append(context.problem(key, "\(error)")) }
        }
        read("idv.trusted_keys") { _ = try settings.idv.loadTrustedKeys() }
        read("password.common_passwords_file") { _ = try settings.password.loadCommonPasswords() }
        read("cluster.root_key") { _ = try settings.cluster.loadRootKey() }
        read("forgot_password.notifier") {
            guard settings.forgotPassword.enabled, let program = settings.forgotPassword.notifier.first else { return }
            if access(program, X_OK) != 0 {
                throw CheckMessage("the notifier program \(program) cannot be run: \(String(cString: strerror(errno)))")
            }
        }
        read("storage.seal_key_file") {
            guard settings.storage.backend == .postgresql else { return }
            _ = try SealKey.clusterKey(file: settings.storage.sealKeyFile, environment: context.environment)
        }
        for (index, witness) in settings.witnesses.enumerated() {
            do {
                _ = try StepSignConfiguration(witnesses: [witness]).loadWitnessKeys()
            } catch {
                findings.append(context.problem("witness[\(index + 1)].key", "\(error)"))
            }
        }
        return findings
    }

    /// Strict modes of the state directory, its database and `keys/`.
    static func stateDirectory(_ context: CheckContext) async -> [CheckFinding] {
        do {
            try StrictModes().checkStateDirectory(context.settings.server.stateDir)
            return [.note("state directory \(context.settings.server.stateDir)")]
        } catch {
            return [context.problem("server.state_dir", "\(error)")]
        }
    }

    /// Strict modes of the directory the daemon would make its socket in, when it exists
    /// (under systemd the socket unit passes the socket, and makes its directory).
    static func socketDirectory(_ context: CheckContext) async -> [CheckFinding] {
        let socket = context.settings.server.socket
        guard access(StrictModes.parent(of: socket), F_OK) == 0 else { return [] }
        do {
            try StrictModes().checkSocketDirectory(of: socket)
            return []
        } catch {
            return [context.problem("server.socket", "\(error)")]
        }
    }

    /// The SSH agent's socket (`[ssh_agent] socket`, when set): the directory the daemon makes
    /// it in exists, is a directory the daemon's user may make a socket in, and passes strict
    /// modes as the main socket's does. (The file's values, namespaces and ranges, the
    /// configuration reader checked before any step runs.)
    static func sshAgentSocket(_ context: CheckContext) async -> [CheckFinding] {
        let socket = context.settings.sshAgent.socket
        guard context.settings.sshAgent.enabled else { return [] }
        let directory = StrictModes.parent(of: socket)
        var info = stat()
        guard stat(directory, &info) == 0 else {
            return [context.problem("ssh_agent.socket", "cannot use the directory \(directory) of the agent's socket \(socket): "
                + String(cString: strerror(errno)))]
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            return [context.problem("ssh_agent.socket", "\(directory), where the agent's socket \(socket) goes, is not a directory")]
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            return [context.problem("ssh_agent.socket", "cannot make the agent's socket \(socket) in \(directory): "
                + String(cString: strerror(errno)))]
        }
        do {
            try StrictModes().checkSocketDirectory(of: socket, role: "ssh_agent.socket")
            return [.note("SSH agent on \(socket)")]
        } catch {
            return [context.problem("ssh_agent.socket", "\(error)")]
        }
    }

    /// The key passphrase credential, the PKCS#11 token (`key_store = "pkcs11"`: the module
    /// loads, the token is found and the PIN logs in) and every key file in `keys/`, opened as
    /// the start opens them, token keys found in the token by `CKA_ID` (nothing is made: a
    /// first start makes the keys).
    static func keys(_ context: CheckContext) async -> [CheckFinding] {
        // Not for a reload: the keys, the passphrase and the PIN are read at start only (a
        // reload keeps the daemon's keyring and token sessions; a second login may be refused
        // by a token of one user at a time, and a wrong PIN would spend a try at each reload),
        // and under systemd 252 an ExecReload= process may not read the unit's credentials
        // (EACCES: every reload of a daemon with a passphrase credential failed, boot test).
        if context.forReload {
            return [.note("keys and their credentials not opened (read at start; a reload keeps the daemon's keys)")]
        }
        let passphrase: [UInt8]?
        do {
            passphrase = try KeyPassphraseCredential.load()
        } catch {
            return [context.problem(nil, "\(error)")]  // not a key of the file: the credential names itself
        }
        defer { if var secret = passphrase { KeyPassphraseCredential.wipe(&secret) } }
        var token: PKCS11Token?
        if context.settings.signing.keyStore == .pkcs11 {
            switch openToken(context) {
            case let .success(opened): token = opened
            case let .failure(problem): return [problem.finding]  // the token's keys cannot be checked without it
            }
        }
        do {
            let found = try KeyFilesCheck.check(stateDirectory: context.settings.server.stateDir, passphrase: passphrase,
                                                sealKeyInStateDirectory: context.settings.storage.backend == .sqlite,
                                                token: token)
            let keys = found.signingKeys == 0 ? "no signing key yet (the first start makes one)"
                : found.signingKeys == 1 ? "1 signing key" : "\(found.signingKeys) signing keys"
            let store = token.map { ", PKCS#11 token \($0.label.isEmpty ? "(first present)" : "\"\($0.label)\"")" } ?? ""
            return [.note(keys + (passphrase == nil ? "" : ", encrypted") + store)]
        } catch {
            return [context.problem("server.state_dir", "\(error)")]
        }
    }

    /// The token of `[signing.pkcs11]`, opened as the start opens it: the PIN read, the module
    /// loaded, the token found by label and logged in to (once: a wrong PIN counts against the
    /// token's retry limit as a start's would). A problem names the key that leads to it, and
    /// never the PIN.
    private static func openToken(_ context: CheckContext) -> Result<PKCS11Token, FindingError> {
        let pkcs11 = context.settings.signing.pkcs11
        // The PIN's source: its file's key, or nil for the credential (the message names it).
        let pinKey: String? = pkcs11.pinFile.isEmpty ? nil : "signing.pkcs11.pin_file"
        var pin: [UInt8]
        do {
            pin = try PKCS11PINCredential.load(pkcs11)
        } catch {
            return .failure(FindingError(context.problem(pinKey ?? "signing.pkcs11", "\(error)")))
        }
        defer { KeyPassphraseCredential.wipe(&pin) }
        do {
            return .success(try PKCS11Token(modulePath: pkcs11.module, label: pkcs11.tokenLabel, pin: pin,
                                            maxSessions: 1))
        } catch {
            let source = pkcs11.pinFile.isEmpty
                ? "the credential \(StepSignConfiguration.Signing.PKCS11.pinCredentialName)" : "the PIN file \(pkcs11.pinFile)"
            let key: String? = switch error.operation {
            case "dlopen", "C_GetFunctionList", "C_Initialize": "signing.pkcs11.module"
            case "C_GetTokenInfo", "C_GetSlotList": "signing.pkcs11.token_label"
            case _ where error.isPINRefused: pinKey
            default: "signing.pkcs11"
            }
            let message = error.isPINRefused ? "the token refused the PIN from \(source): \(error)" : "\(error)"
            return .failure(FindingError(context.problem(key, message)))
        }
    }

    /// The database: SQLite's schema, or PostgreSQL's reachability and schema; never migrated.
    static func database(_ context: CheckContext) async -> [CheckFinding] {
        let settings = context.settings
        switch settings.storage.backend {
        case .sqlite:
            let path = settings.server.stateDir + "/" + SQLiteStore.fileName
            do {
                switch try SQLiteSchemaState.read(stateDirectory: settings.server.stateDir) {
                case .absent:
                    return [.note("no SQLite database yet (the first start makes it)")]
                case let .current(migrations):
                    return [.note("SQLite schema v\(migrations)")]
                case let .older(applied, known):
                    return [.note("SQLite schema v\(applied), migrated to v\(known) at the next start")]
                case let .newer(unknown):
                    return [context.problem("server.state_dir", "\(SQLiteSchemaTooNew(path: path, unknown: unknown))")]
                }
            } catch {
                return [context.problem("server.state_dir", "cannot read the SQLite database \(path): \(error)")]
            }
        case .postgresql:
            let pg = settings.storage.postgresql
            let target = pg.usesUnixSocket ? "\(pg.host) (Unix socket)" : "\(pg.host):\(pg.port)"
            // Every [storage] key is restart-only: a reload never connects again, so a server that
            // is down now must not fail it (the daemon's pool reconnects on its own).
            if context.forReload {
                return [.note("PostgreSQL \(target) not contacted (a reload keeps the daemon's connections)")]
            }
            do {
                let state = try await PostgresSchemaState.read(PostgresStoreConfiguration(pg))
                if state.found > state.supported {
                    return [context.problem("storage.postgresql", "\(PostgresStoreError.schemaTooNew(found: state.found, supported: state.supported))")]
                }
                let migrated = state.found < state.supported ? ", migrated to v\(state.supported) at the next start" : ""
                return [.note("PostgreSQL \(target) schema v\(state.found)\(migrated)")]
            } catch let error as PostgresStoreError {
                let key = switch error {
                case .passwordFile: "storage.postgresql.password_file"
                case .tls: "storage.postgresql.tls"
                case let .server(sqlState, _) where sqlState == "3D000": "storage.postgresql.database"  // invalid_catalog_name
                case .server where error.refusesLoginOrDatabase: "storage.postgresql.user"
                default: "storage.postgresql.host"
                }
                return [context.problem(key, "PostgreSQL at \(target), database \(pg.database), user \(pg.user): \(error)")]
            } catch {
                return [context.problem("storage.postgresql.host", "PostgreSQL at \(target): \(error)")]
            }
        }
    }
}

/// A finding carried as an error, for a helper that returns a value or the problem.
struct FindingError: Error {
    let finding: CheckFinding
    init(_ finding: CheckFinding) { self.finding = finding }
}

/// A problem in words, for a check that has no error type of its own.
struct CheckMessage: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
