import StepSignProtocol

/// Something a monitor of the log must not let pass (SPEC §5.6): it stops, says it on a line at
/// critical and to `--exec`, and exits 1.
public struct MonitorAlarm: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The new checkpoint does not extend the last one seen (another history), or its
        /// entries and tiles do not hash to it.
        case inconsistentCheckpoint = "inconsistent-checkpoint"
        /// The checkpoint is not signed by a trusted log key.
        case untrustedCheckpoint = "untrusted-checkpoint"
        /// An entry whose JWS does not verify, or a revoked key's after its revocation.
        case badEntry = "bad-entry"
        /// An entry signed by a key that is not trusted.
        case untrustedKey = "untrusted-key"
        /// A user that no `userAdded` event brought in (or one removed since).
        case userWithoutEvent = "user-without-event"
        /// A signing key that no key event (created, endorsed, rotated) brought in.
        case keyWithoutEvent = "key-without-event"
    }

    public var kind: Kind
    /// The log index of the entry, when one is at fault.
    public var index: Int64?
    public var detail: String

    public init(_ kind: Kind, index: Int64? = nil, _ detail: String) {
        self.kind = kind
        self.index = index
        self.detail = detail
    }

    /// The alarm as one JSON object: `alarm`, `index` (or null), `detail`, and where it was seen.
    public func json(origin: String?, treeSize: Int64?) -> JSONValue {
        .object([("alarm", .string(kind.rawValue)), ("index", index.map { .int($0) } ?? .null),
                 ("detail", .string(detail)), ("origin", origin.map { .string($0) } ?? .null),
                 ("treeSize", treeSize.map { .int($0) } ?? .null)])
    }

    public var description: String { "\(kind.rawValue)\(index.map { " at log index \($0)" } ?? ""): \(detail)" }
}
