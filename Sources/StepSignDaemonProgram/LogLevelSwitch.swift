import Logging
import StepSignConfig
import Synchronization

/// The daemon's log level, one for the whole process, changed at run time by SIGHUP
/// (`[log] level`).
///
/// swift-log copies a handler into every `Logger`, so a level stored in the handler would be
/// fixed when the logger was made; every handler reads this switch instead.
final class LogLevelSwitch: Sendable {
    /// The switch every handler of the daemon reads.
    static let shared = LogLevelSwitch()

    /// The level in force, as its index in `Logger.Level.allCases`: read on every log call from
    /// every thread, so an atomic rather than a lock.
    private let current = Atomic<Int>(LogLevelSwitch.index(of: .info))

    /// The level in force.
    var level: Logger.Level {
        Logger.Level.allCases[current.load(ordering: .relaxed)]
    }

    /// Puts `level` in force for every logger at once.
    func set(_ level: Logger.Level) {
        current.store(Self.index(of: level), ordering: .relaxed)
    }

    private static func index(of level: Logger.Level) -> Int {
        Logger.Level.allCases.firstIndex(of: level) ?? 2
    }

    /// Puts the configured level in force.
    func apply(_ log: StepSignConfiguration.Log) {
        set(Logger.Level(rawValue: log.level.rawValue) ?? .info)
    }
}

/// A log handler whose level is the `LogLevelSwitch`'s; everything else is `Wrapped`'s.
struct SwitchedLogHandler<Wrapped: LogHandler>: LogHandler {
    var wrapped: Wrapped
    let levels: LogLevelSwitch

    init(_ wrapped: Wrapped, levels: LogLevelSwitch = .shared) {
        self.wrapped = wrapped
        self.levels = levels
    }

    /// The switch's level; setting it changes the level of the whole process.
    var logLevel: Logger.Level {
        get { levels.level }
        set { levels.set(newValue) }
    }

    var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { wrapped.metadataProvider }
        set { wrapped.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        wrapped.log(event: event)
    }
}
