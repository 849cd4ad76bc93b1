/// A complete subtree of the log's Merkle tree: the `2^level` leaves from `index << level`
/// on. Once the log has those leaves the subtree's hash never changes, so stores keep exactly
/// these hashes (level 0: the leaves), and every root and proof of any tree size is made of
/// O(log n) of them (SPEC §5.5).
public struct MerkleNode: Sendable, Hashable, CustomStringConvertible {
    public var level: Int
    public var index: Int64

    public init(level: Int, index: Int64) {
        self.level = level
        self.index = index
    }

    /// The first leaf the subtree covers.
    public var firstLeaf: Int64 { index << level }

    /// The number of leaves it covers.
    public var width: Int64 { 1 << level }

    public var description: String { "(\(level), \(index))" }

    /// The node's place in a dense linear order in which every append writes its new nodes
    /// right after the previous append's (Go's `sumdb/tlog.StoredHashIndex`): leaf n, then the
    /// subtrees it completes, then leaf n + 1. A store keyed by it only ever appends at the end
    /// of its index, one page per commit, whatever the level.
    public var storageIndex: Int64 {
        // Level L's n-th hash comes right after level L+1's (2n+1)-th leaf-order position.
        var n = index
        for _ in 0..<level { n = 2 * n + 1 }
        // Level 0's n-th hash is at n + n/2 + n/4 + … .
        var position: Int64 = 0
        while n > 0 {
            position += n
            n >>= 1
        }
        return position + Int64(level)
    }
}
