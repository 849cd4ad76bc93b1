import StepSignSystem

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
    /// The errno of the read that failed, when the file could not be read (EIO, EMFILE, …):
    /// the daemon's start tells a fault that may pass from a setting to fix by it.
    public var errno: Int32?

    public init(file: String, line: Int?, key: String?, message: String, errno: Int32? = nil) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
        self.errno = errno
    }

    public var description: String {
        var out = file
        if let line { out += ":\(line)" }
        if let key { out += ": \(key)" }
        return out + ": " + message
    }
}

extension ConfigError: ErrnoCarrying {
    package var carriedErrno: Int32? { errno }
    package var carriedPath: String? { errno == nil ? nil : file }
}
