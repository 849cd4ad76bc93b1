extension StepSignConfiguration {
    /// `[log]`: logging to stderr.
    public struct Log: Sendable, Equatable {
        /// The log levels, named as swift-log names them.
        public enum Level: String, Sendable, Equatable, CaseIterable {
            case trace, debug, info, notice, warning, error, critical
        }

        /// `level`: the least severe level logged. Default "info"; one of trace, debug,
        /// info, notice, warning, error, critical.
        public var level: Level

        public init(level: Level = .info) {
            self.level = level
        }
    }
}
