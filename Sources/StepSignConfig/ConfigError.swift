/// A configuration the daemon refuses, naming the file, line and key.
///
/// `description` reads like a compiler diagnostic:
///
///     config/dev.toml:12: password.max_attempts: expected an integer from 1 to 100, found "three"
///
/// `line` is nil when the problem has no line (the file cannot be read, or a required key
/// is missing); `key` is nil for problems of the file as a whole (e.g. TOML syntax).
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file, as given to `load(contentsOf:)` or `parse(_:file:)`.
    public var file: String
    /// The 1-based line of the problem, when there is one.
    public var line: Int?
    /// The dotted key of the problem, e.g. `password.policy.minL`, when there is one.
    public var key: String?
    /// What is wrong, without the file, line or key.
    public var message: String

    public init(file: String, line: Int?, key: String?, message: String) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    public var description: String {
        var out = file
        if let line { out += ":\(line)" }
        if let key { out += ": \(key)" }
        return out + ": " + message
    }
}
