/// A TOML document that stepsign's config reader refuses, with the place it went wrong.
///
/// `line` and `column` are 1-based; `column` counts Unicode scalars.
public struct TOMLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem was found.
    public enum Reason: Sendable, Equatable {
        /// The text is not valid TOML.
        case syntax
        /// A key or table is defined twice.
        case duplicate
        /// Valid TOML that stepsign's config reader does not support
        /// (multi-line strings, inline tables, arrays of tables, dates and times).
        case unsupported
    }

    /// What kind of problem was found.
    public var reason: Reason
    /// The 1-based line of the problem.
    public var line: Int
    /// The 1-based column of the problem, in Unicode scalars.
    public var column: Int
    /// A sentence naming the problem, without the position.
    public var message: String

    public init(_ reason: Reason, line: Int, column: Int, message: String) {
        self.reason = reason
        self.line = line
        self.column = column
        self.message = message
    }

    public var description: String {
        "line \(line), column \(column): \(message)"
    }
}
