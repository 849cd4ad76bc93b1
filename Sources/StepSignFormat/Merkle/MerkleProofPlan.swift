/// A root or proof to be made from stored hashes: its leaf ranges, in the result's order, and
/// the complete subtrees whose hashes they need (each once, so one query reads them all).
public struct MerkleProofPlan: Sendable, Equatable {
    /// The ranges of leaves whose hashes are the result, in order.
    public let ranges: [Range<Int64>]
    /// Every complete subtree the ranges are made of, each once.
    public let nodes: [MerkleNode]

    init(ranges: [Range<Int64>]) {
        self.ranges = ranges
        var seen = Set<MerkleNode>()
        nodes = ranges.flatMap(MerkleTree.subtrees(of:)).filter { seen.insert($0).inserted }
    }

    /// The result's hashes, one per range, from the hashes read for ``nodes``.
    public func hashes(_ read: [MerkleNode: [UInt8]]) throws(MerkleTreeError) -> [[UInt8]] {
        var result: [[UInt8]] = []
        result.reserveCapacity(ranges.count)
        for range in ranges {
            var parts: [[UInt8]] = []
            for node in MerkleTree.subtrees(of: range) {
                guard let hash = read[node], hash.count == MerkleHash.size else { throw .missingNode(node) }
                parts.append(hash)
            }
            result.append(MerkleTree.rangeHash(parts))
        }
        return result
    }
}

/// A stored tree that lacks a hash a root or proof needs, or a size out of range.
public enum MerkleTreeError: Error, Equatable, CustomStringConvertible {
    /// The store has no (well-formed) hash of this complete subtree.
    case missingNode(MerkleNode)
    /// Hashes given for a tree do not fit its size.
    case badFrontier(size: Int64, hashes: Int)

    public var description: String {
        switch self {
        case let .missingNode(node): "the tree's hash of the subtree \(node) is missing"
        case let .badFrontier(size, hashes): "\(hashes) hashes do not make the right edge of a tree of \(size) leaves"
        }
    }
}
