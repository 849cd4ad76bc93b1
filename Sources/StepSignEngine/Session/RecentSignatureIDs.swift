import StepSignCrypto

/// The signature IDs a session made most recently, at most `capacity` of them.
///
/// `getSignature` serves a signature to the session that made it. Keeping every ID would let
/// one long-lived connection grow the daemon's memory without bound, so the oldest ID is
/// forgotten once `capacity` newer ones exist (an admin can still read it).
///
/// An ID is kept as its 16 bytes when it is a UUID's canonical lowercase text, as every ID
/// this daemon makes is: a session of 4,096 string IDs was 4,096 heap strings hashed byte by
/// byte on every signature, about 1 µs of a signature's CPU (issue 43). Any other text is kept
/// as text, so lookups mean the same either way.
struct RecentSignatureIDs: Sendable {
    /// How many IDs a session remembers.
    static let capacity = 4096

    private var members: Set<SignatureIDKey> = []
    /// Insertion order, used as a ring once full; `next` is the oldest slot.
    private var order: [SignatureIDKey] = []
    private var next = 0

    /// Remembers `id`, forgetting the oldest one when full.
    mutating func insert(_ id: String) {
        let key = SignatureIDKey(id)
        guard members.insert(key).inserted else { return }
        if order.count < Self.capacity {
            order.append(key)
            return
        }
        members.remove(order[next])
        order[next] = key
        next = (next + 1) % Self.capacity
    }

    func contains(_ id: String) -> Bool {
        members.contains(SignatureIDKey(id))
    }

    var count: Int { members.count }
}
