/// The daemon's configuration: every key of SPEC §6, read from a TOML file.
///
/// Missing keys take the defaults documented on each property (and in
/// `config/stepsignd.toml`); unknown keys and tables, values of the wrong type and values
/// out of range are refused with a `ConfigError` naming the file, line and key. Command
/// line flags (`--socket`, `--state-dir`) are applied by the daemon, not here.
public struct StepSignConfiguration: Sendable, Equatable {
    /// `instance`: the `iss` of every signature. Default "stepsign"; not empty.
    public var instance: String
    /// `[server]`: the socket and its limits.
    public var server: Server
    /// `[access]`: which peers (by SO_PEERCRED) may use the socket.
    public var access: Access
    /// `[signing]`: signing options.
    public var signing: Signing
    /// `[password]`: attempts, expiry, history, hashing and the policy.
    public var password: Password
    /// `[forgot_password]`: the forgot-password flow.
    public var forgotPassword: ForgotPassword
    /// `[lda]`: local device authentication.
    public var lda: LDA
    /// `[idv]`: the identity verification server (authentication level 4).
    public var idv: IDV
    /// `[log]`: logging.
    public var log: Log
    /// `[ledger]`: ledger checkpoints.
    public var ledger: Ledger
    /// `[metrics]`: the Prometheus endpoint, off by default.
    public var metrics: Metrics
    /// `[storage]`: SQLite (default) or PostgreSQL.
    public var storage: Storage
    /// `[cluster]`: the cluster root key that other instances' keys must chain to.
    public var cluster: Cluster
    /// `[[witness]]`: the witnesses that cosign the log's checkpoints (SPEC §5.6), in order.
    public var witnesses: [Witness]
    /// `[stepup]`: the step-up reuse window (SPEC §3.4).
    public var stepUp: StepUp
    /// `[[approval]]`: rules for requests that need approval by several people (SPEC §3.4),
    /// first match wins; none by default.
    public var approvals: [ApprovalRule]
    /// `[ssh_agent]`: the ssh-agent socket (SPEC §3.5), off by default.
    public var sshAgent: SSHAgent

    public init(
        instance: String = "stepsign",
        server: Server = Server(),
        access: Access = Access(),
        signing: Signing = Signing(),
        password: Password = Password(),
        forgotPassword: ForgotPassword = ForgotPassword(),
        lda: LDA = LDA(),
        idv: IDV = IDV(),
        log: Log = Log(),
        ledger: Ledger = Ledger(),
        storage: Storage = Storage(),
        cluster: Cluster = Cluster(),
        witnesses: [Witness] = [],
        stepUp: StepUp = StepUp(),
        approvals: [ApprovalRule] = [],
        metrics: Metrics = Metrics(),
        sshAgent: SSHAgent = SSHAgent()
    ) {
        self.instance = instance
        self.server = server
        self.access = access
        self.signing = signing
        self.password = password
        self.forgotPassword = forgotPassword
        self.lda = lda
        self.idv = idv
        self.log = log
        self.ledger = ledger
        self.storage = storage
        self.witnesses = witnesses
        self.cluster = cluster
        self.stepUp = stepUp
        self.approvals = approvals
        self.metrics = metrics
        self.sshAgent = sshAgent
    }

    /// The configuration used when the file sets nothing: the defaults of SPEC §6.
    public static let `default` = StepSignConfiguration()

    /// Reads and parses the config file at `path`.
    public static func load(contentsOf path: String) throws(ConfigError) -> StepSignConfiguration {
        try loadWithText(contentsOf: path).configuration
    }

    /// Reads and parses the config file at `path`, returning the text it parsed too (the
    /// daemon records its SHA-256, SPEC §5.4).
    public static func loadWithText(contentsOf path: String) throws(ConfigError) -> (configuration: StepSignConfiguration, text: String) {
        let text = try ConfigFile.read(path, key: nil)
        return (try parse(text, file: path), text)
    }

    /// Every problem of the config file at `path`, not only the first (`stepsignd --check`):
    /// after each, the key it names is taken out, so that its default stands in (a key of a
    /// `[[table]]`: all of those tables), and the rest is read again. A problem of the text
    /// itself (TOML syntax), or one whose key cannot be taken out, ends the list. Empty when
    /// the file is good.
    package static func problems(contentsOf path: String) -> [ConfigError] {
        let text: String
        do {
            text = try ConfigFile.read(path, key: nil)
        } catch {
            return [error]
        }
        var document: TOMLDocument
        do {
            document = try TOMLDocument.parse(text)
        } catch {
            return [ConfigError(file: path, line: error.line, key: nil, message: error.message)]
        }
        var problems: [ConfigError] = []
        while problems.count < 100 {
            do {
                _ = try StepSignConfiguration(ConfigTableReader(file: path, path: "", table: document.root))
                break
            } catch {
                problems.append(error)
                // A key inside a `[[table]]` takes all of them out: without the one key, its
                // table would be refused again as incomplete.
                guard var parts = error.key?.split(separator: ".") else { break }
                if let indexed = parts.firstIndex(where: { $0.hasSuffix("]") }), let open = parts[indexed].firstIndex(of: "[") {
                    parts = Array(parts[..<indexed]) + [parts[indexed][..<open]]
                }
                guard document.root.removeValue(at: parts[...]) else { break }
            }
        }
        return problems
    }

    /// Parses config text; `file` names it in errors.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> StepSignConfiguration {
        let document: TOMLDocument
        do {
            document = try TOMLDocument.parse(text)
        } catch {
            throw ConfigError(file: file, line: error.line, key: nil, message: error.message)
        }
        return try StepSignConfiguration(ConfigTableReader(file: file, path: "", table: document.root))
    }
}
