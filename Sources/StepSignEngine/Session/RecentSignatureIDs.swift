/// The signature IDs a session made most recently, at most `capacity` of them.
///
/// `getSignature` serves a signature to the session that made it. Keeping every ID would let
/// one long-lived connection grow the daemon's memory without bound, so the oldest ID is
/// forgotten once `capacity` newer ones exist (an admin can still read it).
struct RecentSignatureIDs: Sendable {
    /// How many IDs a session remembers.
    static let capacity = 4096

    private var members: Set<String> = []
    /// Insertion order, used as a ring once full; `next` is the oldest slot.
    private var order: [String] = []
    private var next = 0

    /// Remembers `id`, forgetting the oldest one when full.
    mutating func insert(_ id: String) {
        guard members.insert(id).inserted else { return }
        if order.count < Self.capacity {
            order.append(id)
            return
        }
        members.remove(order[next])
        order[next] = id
        next = (next + 1) % Self.capacity
    }

    func contains(_ id: String) -> Bool {
        members.contains(id)
    }

    var count: Int { members.count }
}
