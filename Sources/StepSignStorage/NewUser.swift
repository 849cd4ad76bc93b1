import Foundation

/// What ``StepSignStore/addUser(_:)`` needs to create a user.
public struct NewUser: Sendable, Equatable {
    /// The user ID; case-sensitive.
    public var name: String
    /// The scrypt hash string of the initial password.
    public var passwordHash: String
    /// The user must choose a new password at the first login.
    public var mustChangePassword: Bool
    /// Creation time; also the time the initial password was set.
    public var createdAt: Date

    public init(name: String, passwordHash: String, mustChangePassword: Bool = false, createdAt: Date = Date()) {
        self.name = name
        self.passwordHash = passwordHash
        self.mustChangePassword = mustChangePassword
        self.createdAt = createdAt
    }
}
