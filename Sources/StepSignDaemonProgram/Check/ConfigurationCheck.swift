import StepSignConfig

/// `stepsignd --check [--config FILE]` (SPEC §8, issue 42): reads the configuration and
/// everything it names as a start would, and reports each problem as `FILE:LINE: KEY: what`,
/// as `sshd -t` and `nginx -t` do. It never listens, never takes the state directory's lock,
/// and never creates, migrates or changes a file, so it may run beside the daemon (the unit's
/// `ExecReload=` runs it before a reload).
///
/// The checks are ``ConfigurationCheck/steps``: one small function each, which reuses what
/// the start runs (the configuration reader, ``StrictModes``, the key, credential and store
/// readers). Adding a check is adding one function to that list.
struct ConfigurationCheck {
    /// One check: what it found in the context, in order.
    typealias Step = @Sendable (CheckContext) async -> [CheckFinding]

    /// The configuration file, as given.
    let configPath: String
    /// The command line's overrides (`--socket`, `--state-dir`).
    let socket: String?
    let stateDirectory: String?
    let environment: [String: String]
    /// `--for-reload`: skip what a reload does not open again (``CheckContext/forReload``).
    var forReload = false

    /// EX_CONFIG: the exit status when anything is wrong.
    static let problemsFound: Int32 = 78

    /// Runs every check; prints each problem on stderr and, when there is none, one line on
    /// stdout. Returns the exit status: 0, or 78.
    func run() async -> Int32 {
        let settings: StepSignConfiguration
        let text: String
        do {
            (settings, text) = try StepSignConfiguration.loadWithText(contentsOf: configPath)
        } catch {
            // The file is refused: each of its problems, and nothing it names can be trusted.
            let problems = StepSignConfiguration.problems(contentsOf: configPath).sorted { ($0.line ?? 0) < ($1.line ?? 0) }
            for problem in problems.isEmpty ? [error] : problems { FileHandleOutput.standardError("\(problem)\n") }
            let count = problems.count > 1 ? "\(problems.count) problems" : "1 problem"
            FileHandleOutput.standardError("stepsignd: \(configPath): \(count) in the file; the files it names are not checked\n")
            return Self.problemsFound
        }
        var overridden = settings
        var commandLine: Set<String> = []
        if let socket {
            overridden.server.socket = socket
            commandLine.insert("server.socket")
        }
        if let stateDirectory {
            overridden.server.stateDir = stateDirectory
            commandLine.insert("server.state_dir")
        }
        let context = CheckContext(configPath: configPath, settings: overridden, lines: ConfigKeyLines(text: text),
                                   setOnCommandLine: commandLine, environment: environment, forReload: forReload)
        var problems: [ConfigError] = []
        var notes: [String] = []
        for step in Self.steps {
            for finding in await step(context) {
                switch finding {
                case let .problem(problem): problems.append(problem)
                case let .note(note): notes.append(note)
                }
            }
        }
        guard problems.isEmpty else {
            for problem in problems { FileHandleOutput.standardError("\(problem)\n") }
            let count = problems.count == 1 ? "1 problem" : "\(problems.count) problems"
            FileHandleOutput.standardError("stepsignd: \(configPath): \(count)\n")
            return Self.problemsFound
        }
        FileHandleOutput.standardOutput("stepsignd: \(configPath): configuration ok (\(notes.joined(separator: ", ")))\n")
        return 0
    }
}

/// What one check found: a problem (file, line, key and what is wrong), or a note for the
/// summary line of a good configuration.
enum CheckFinding: Sendable {
    case problem(ConfigError)
    case note(String)
}
