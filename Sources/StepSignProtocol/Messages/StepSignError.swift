/// A synchronous rejection of a request: the reply's `error` (SPEC §3.3).
///
/// A rejected request changes no state and raises no events.
public struct StepSignError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The SPEC §3.3 code.
    public var code: Code
    /// A human-readable reason. Never contains a secret.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// Synchronous error codes of SPEC §3.3; the numbers follow the REL-ID SDK where it has one.
    public enum Code: Int, Sendable {
        case accepted = 0
        case invalidArguments = 4
        case sessionExpired = 5
        case wrongState = 11
        case permissionDenied = 13
        case busy = 14
        case internalError = 15
        case userBlocked = 148
        case samePassword = 167
        case notSupported = 170
        case authenticationInProgress = 213
        case unsupportedAuthCombination = 214
    }

    public static func invalid(_ message: String) -> StepSignError { StepSignError(.invalidArguments, message) }
    public static func wrongState(_ message: String) -> StepSignError { StepSignError(.wrongState, message) }
    public static func internalError(_ message: String) -> StepSignError { StepSignError(.internalError, message) }
}
