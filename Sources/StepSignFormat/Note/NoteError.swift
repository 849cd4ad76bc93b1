/// Why a signed note, a checkpoint, a verifier key or a proof file was refused.
public enum NoteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not in the format its C2SP specification gives.
    case malformed(String)
    /// Well-formed, but no signature of a trusted key verifies (or one of them fails).
    case notVerified(String)

    public var description: String {
        switch self {
        case let .malformed(why): "malformed: \(why)"
        case let .notVerified(why): "not verified: \(why)"
        }
    }
}
