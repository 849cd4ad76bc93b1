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
}
