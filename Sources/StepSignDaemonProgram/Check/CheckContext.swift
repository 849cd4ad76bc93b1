import StepSignConfig

/// What every check of `stepsignd --check` reads: the configuration as the daemon would run
/// it (the command line's overrides applied), where each key was written, and the environment
/// (`$CREDENTIALS_DIRECTORY`).
struct CheckContext: Sendable {
    let configPath: String
    let settings: StepSignConfiguration
    let lines: ConfigKeyLines
    /// Keys the command line set (`server.socket`, `server.state_dir`): they have no line.
    let setOnCommandLine: Set<String>
    let environment: [String: String]
    /// `--check --for-reload` (the unit's `ExecReload=`): a reload keeps what the daemon opened
    /// at start (the store's connections, the token's sessions: restart-only keys), so whether
    /// PostgreSQL answers and the token logs in is not checked; every file and value is.
    var forReload = false

    /// A problem of `key` (dotted, e.g. `storage.postgresql.password_file`), at the line where
    /// the file sets it, else at the line of the nearest table around it that the file has
    /// (none when the default is in force or the command line set it).
    func problem(_ key: String?, _ message: String) -> CheckFinding {
        .problem(ConfigError(file: configPath, line: key.flatMap(line(of:)), key: key, message: message))
    }

    private func line(of key: String) -> Int? {
        if setOnCommandLine.contains(key) { return nil }
        var parts = key.split(separator: ".").map(String.init)
        while !parts.isEmpty {
            if let line = lines.line(of: parts.joined(separator: ".")) { return line }
            parts.removeLast()
        }
        return nil
    }
}
