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
    static let passwordExpired = Status(.passwordExpired, "The password has expired; set a new one")
    static let passwordExpiredWhileUpdating = Status(.passwordExpiredWhileUpdating, "The password expired while updating")
    static let passwordReused = Status(.passwordReused, "The new password was used before; choose another")
    static func policyViolated(_ message: String) -> Status {
        Status(.policyViolated, "The password does not meet the policy: \(message)")
    }
    static func invalidActivationCode(attemptsLeft: Int) -> Status {
        Status(.invalidActivationCode, "Invalid activation code, \(attemptsLeft) attempt\(attemptsLeft == 1 ? "" : "s") left")
    }
    static let activationAttemptsExhausted = Status(.attemptsExhausted, "Activation code attempts exhausted")

    var json: JSONValue { ["code": .int(Int64(code.rawValue)), "message": .string(message)] }
}
