import Logging

/// swift-log to standard error at one level, for the witness's two programs (the journal takes
/// standard error under systemd).
public enum StandardErrorLogging {
    /// Bootstraps the logging system; nil (and nothing done) for an unknown level name.
    public static func bootstrap(level name: String) -> Logger.Level? {
        guard let level = Logger.Level(rawValue: name) else { return nil }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return level
    }
}
