/// Why a daemon trusts a signing key, or why it does not (SPEC §5.4).
///
/// Nothing here comes from a database row alone: a key is the daemon's own because its
/// private half is in the daemon's `keys/`, and another instance's key is endorsed because a
/// chain of endorsement signatures from it ends at the cluster root of the configuration.
public enum KeyTrust: Sendable, Equatable {
    /// The private half is in this daemon's `keys/`.
    case own
    /// Another instance's key with a valid endorsement chain; `endorser` is the kid that
    /// signed its endorsement, or ``rootEndorser`` for the cluster root.
    case endorsed(endorser: String)
    /// Neither: the key is not published, its signatures and checkpoints do not verify, and
    /// the audit reports it. `reason` says what is missing.
    case untrusted(reason: String)

    /// The endorser named for the cluster root.
    public static let rootEndorser = "root"

    /// Whether the daemon publishes and verifies with the key.
    public var isTrusted: Bool {
        if case .untrusted = self { return false }
        return true
    }

    /// Why the key is not trusted, or nil when it is.
    public var problem: String? {
        if case let .untrusted(reason) = self { return reason }
        return nil
    }
}
