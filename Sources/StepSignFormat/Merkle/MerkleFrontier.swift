/// The right edge of a tree: the hashes of its ``MerkleTree/subtrees(of:)`` `0..<size`, which
/// give its root and, for each leaf appended, the complete subtrees it finishes. A store reads
/// it (O(log n) hashes) before appending a batch and keeps it while the batch goes in, so an
/// append costs O(log n) hashing at any size (SPEC §5.5).
public struct MerkleFrontier: Sendable, Equatable {
    /// The number of leaves.
    public private(set) var size: Int64
    private var nodes: [MerkleNode]
    private var hashes: [[UInt8]]

    /// The empty tree.
    public init() {
        size = 0
        nodes = []
        hashes = []
    }

    /// The tree of `size` leaves whose right-edge subtrees (`subtrees(of: 0..<size)`, in that
    /// order) have `hashes`.
    public init(size: Int64, hashes: [[UInt8]]) throws(MerkleTreeError) {
        let nodes = MerkleTree.subtrees(of: 0..<size)
        guard nodes.count == hashes.count, hashes.allSatisfy({ $0.count == MerkleHash.size }) else {
            throw .badFrontier(size: size, hashes: hashes.count)
        }
        self.size = size
        self.nodes = nodes
        self.hashes = hashes
    }

    /// The root of the tree.
    public var root: [UInt8] { MerkleTree.rangeHash(hashes) }

    /// The hashes of the right-edge subtrees, largest first: with ``size``, all a tree needs
    /// to grow (``init(size:hashes:)`` takes them back).
    public var edgeHashes: [[UInt8]] { hashes }

    /// Appends a leaf with hash `leafHash` and returns the complete subtrees it finishes, the
    /// leaf itself first, each with its hash: what the store writes for it.
    public mutating func append(leafHash: [UInt8]) -> [(MerkleNode, [UInt8])] {
        var node = MerkleNode(level: 0, index: size)
        var hash = leafHash
        var finished = [(node, hash)]
        while let last = nodes.last, last.level == node.level {
            hash = MerkleHash.node(hashes.removeLast(), hash)
            nodes.removeLast()
            node = MerkleNode(level: node.level + 1, index: node.index >> 1)
            finished.append((node, hash))
        }
        nodes.append(node)
        hashes.append(hash)
        size += 1
        return finished
    }
}
