import Foundation

/// One earlier password of a user, as the store keeps it for the reuse rule (SPEC §4
/// `history`): what `stepsign admin migrate` copies from one store to another.
public struct PasswordHistoryEntry: Sendable, Equatable {
    /// The user the hash belonged to.
    public var user: String
    /// The scrypt hash string of that earlier password.
    public var hash: String
    /// When that password had been set.
    public var setAt: Date

    public init(user: String, hash: String, setAt: Date) {
        self.user = user
        self.hash = hash
        self.setAt = setAt
    }
}
