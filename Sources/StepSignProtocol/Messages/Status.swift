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
        case approvalDenied = 121
        case approvalExpired = 122
        case attemptsExhausted = 153
        case passwordReused = 164
        case policyViolated = 190
    }

    public static let success = Status(.success, "Success")
    public static func authenticationFailed(attemptsLeft: Int) -> Status {
        Status(.authenticationFailed, "Authentication failed, \(attemptsLeft) attempt\(attemptsLeft == 1 ? "" : "s") left")
    }
    public static let attemptsExhausted = Status(.attemptsExhausted, "Attempts exhausted, the user is blocked")
    public static let passwordExpired = Status(.passwordExpired, "The password has expired; set a new one")
    public static func approvalDenied(_ reason: String) -> Status { Status(.approvalDenied, "Approval denied: \(reason)") }
    public static func approvalExpired(_ reason: String) -> Status { Status(.approvalExpired, "Approval expired: \(reason)") }
    public static let passwordExpiredWhileUpdating = Status(.passwordExpiredWhileUpdating, "The password expired while updating")
    public static let passwordReused = Status(.passwordReused, "The new password was used before; choose another")
    public static func policyViolated(_ message: String) -> Status {
        Status(.policyViolated, "The password does not meet the policy: \(message)")
    }
    public static func invalidActivationCode(attemptsLeft: Int) -> Status {
        Status(.invalidActivationCode, "Invalid activation code, \(attemptsLeft) attempt\(attemptsLeft == 1 ? "" : "s") left")
    }
    public static let activationAttemptsExhausted = Status(.attemptsExhausted, "Activation code attempts exhausted")

    /// Writes `"key":{"code":…,"message":…}`.
    func write<Output>(as key: StaticString, to writer: inout JSONWriter<Output>) {
        writer.key(key)
        writer.beginObject()
        writer.member("code", code.rawValue)
        writer.member("message", message)
        writer.endObject()
    }
}
