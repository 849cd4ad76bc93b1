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

    private enum Key: Hashable, Sendable {
        case uuid(UInt64, UInt64)
        case text(String)

        init(_ id: String) {
            self = Self.uuid(id).map { .uuid($0.0, $0.1) } ?? .text(id)
        }

        /// The 128 bits of `id` if it is `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in lowercase hex.
        private static func uuid(_ id: String) -> (UInt64, UInt64)? {
            var id = id
            return id.withUTF8 { text -> (UInt64, UInt64)? in
                guard text.count == 36 else { return nil }
                var high: UInt64 = 0
                var low: UInt64 = 0
                var digits = 0
                for (offset, byte) in text.enumerated() {
                    if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                        guard byte == UInt8(ascii: "-") else { return nil }
                        continue
                    }
                    let nibble: UInt8
                    switch byte {
                    case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = byte - UInt8(ascii: "0")
                    case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = byte - UInt8(ascii: "a") + 10
                    default: return nil
                    }
                    if digits < 16 {
                        high = high << 4 | UInt64(nibble)
                    } else {
                        low = low << 4 | UInt64(nibble)
                    }
                    digits += 1
                }
                return (high, low)
            }
        }
    }

    private var members: Set<Key> = []
    /// Insertion order, used as a ring once full; `next` is the oldest slot.
    private var order: [Key] = []
    private var next = 0

    /// Remembers `id`, forgetting the oldest one when full.
    mutating func insert(_ id: String) {
        let key = Key(id)
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
        members.contains(Key(id))
    }

    var count: Int { members.count }
}
