/// An event's `status` (SPEC §3.3): the outcome of a step inside a flow.
public struct Status: Sendable, Equatable {
    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Event status codes of SPEC §3.3.
    public enum Code: Int, Sendable {
        case success = 100
        case authenticationFailed = 102
        case invalidActivationCode = 106
        case passwordExpiredWhileUpdating = 110
        case passwordExpired = 118
        case attemptsExhausted = 153
        case passwordReused = 164
        case policyViolated = 190
    }

    public static let success = Status(.success, "Success")
    static func authenticationFailed(attemptsLeft: Int) -> Status {
        Status(.authenticationFailed, "Authentication failed, \(attemptsLeft) attempt\(attemptsLeft == 1 ? "" : "s") left")
    }
    static let attemptsExhausted = Status(.attemptsExhausted, "Attempts exhausted, the user is blocked")

    var json: JSONValue { ["code": .int(Int64(code.rawValue)), "message": .string(message)] }
}
