import StepSignCrypto

/// The signature IDs a session made most recently, at most `capacity` of them.
///
/// `getSignature` serves a signature to the session that made it. Keeping every ID would let
/// one long-lived connection grow the daemon's memory without bound, so the oldest ID is
/// forgotten once `capacity` newer ones exist (an admin can still read it).
///
/// A ring of the last `capacity` IDs, written in order and searched newest first: remembering
/// an ID is one write, on every signature, and a look-up (`getSignature` and the proofs of a
/// session's own signatures, far rarer, and each a read of the store as well) is a scan of at
/// most `capacity` 16-byte values, a few µs. A hash set of the same IDs cost about 1.3 µs per
/// signature at 64 connections, mostly cache misses in 64 sessions' tables (issue 43). An ID
/// inserted again (an idempotent retry's) takes a slot again: the ring holds the last
/// `capacity` insertions.
///
/// An ID is kept as its 16 bytes when it is a UUID's canonical lowercase text, as every ID
/// this daemon makes is; any other text is kept as text, so look-ups mean the same either way.
struct RecentSignatureIDs: Sendable {
    /// How many IDs a session remembers.
    static let capacity = 4096

    /// Insertion order; once full, `next` is the oldest slot, overwritten by the next insert.
    private var ring: [SignatureIDKey] = []
    private var next = 0

    /// Remembers `id`, forgetting the oldest one when full.
    mutating func insert(_ id: String) {
        let key = SignatureIDKey(id)
        if ring.count < Self.capacity {
            ring.append(key)
            return
        }
        ring[next] = key
        next = (next + 1) % Self.capacity
    }

    /// Whether `id` is one of the last `capacity` inserted (searched newest first).
    func contains(_ id: String) -> Bool {
        let key = SignatureIDKey(id)
        // Newest first: the slots before `next`, newest at `next - 1`, then those from the end
        // of the array back to `next` (older, when the ring has wrapped).
        return ring[..<next].reversed().contains(key) || ring[next...].reversed().contains(key)
    }

    /// How many insertions are remembered (at most `capacity`).
    var count: Int { ring.count }
}
