/// The shape of the log's Merkle tree (RFC 9162 §2.1): which leaf ranges a root or a proof is
/// made of, and which complete subtrees (``MerkleNode``) hold their hashes.
///
/// A store keeps the hash of every complete subtree; a root or proof of any size is then a
/// ``MerkleProofPlan``: the O(log n) subtrees to read in one query, and how their hashes make
/// the result. The ranges follow the RFC's recursive definitions exactly (`MTH`, `PATH`,
/// `PROOF`), so proofs are the ones any RFC 9162 or C2SP verifier checks.
public enum MerkleTree {
    /// The largest power of two smaller than `n` (n > 1): where the RFC splits a tree of n leaves.
    static func split(_ n: Int64) -> Int64 {
        precondition(n > 1)
        var k: Int64 = 1
        while k << 1 < n { k <<= 1 }
        return k
    }

    /// The complete subtrees that make up the leaves `range`, left to right (largest first):
    /// the binary decomposition the RFC's `MTH` splits a range of the tree into.
    public static func subtrees(of range: Range<Int64>) -> [MerkleNode] {
        var nodes: [MerkleNode] = []
        var start = range.lowerBound
        while start < range.upperBound {
            var level = 0
            while level < 62 {
                let width = Int64(1) << (level + 1)
                if start % width != 0 || start + width > range.upperBound { break }
                level += 1
            }
            nodes.append(MerkleNode(level: level, index: start >> level))
            start += Int64(1) << level
        }
        return nodes
    }

    /// The hash of a range of leaves from the hashes of its ``subtrees(of:)``, in that order
    /// (the empty range: the empty tree's root).
    public static func rangeHash(_ subtreeHashes: [[UInt8]]) -> [UInt8] {
        guard var hash = subtreeHashes.last else { return MerkleHash.emptyRoot }
        for left in subtreeHashes.dropLast().reversed() {
            hash = MerkleHash.node(left, hash)
        }
        return hash
    }

    /// The root of a tree of `size` leaves: one range, all of it.
    public static func rootPlan(size: Int64) -> MerkleProofPlan {
        precondition(size >= 0)
        return MerkleProofPlan(ranges: size == 0 ? [] : [0..<size])
    }

    /// The inclusion proof of leaf `index` in a tree of `size` leaves (RFC 9162 §2.1.3.1,
    /// `PATH(m, D[n])`), the sibling nearest the leaf first.
    public static func inclusionPlan(index: Int64, size: Int64) -> MerkleProofPlan {
        precondition(index >= 0 && index < size)
        var ranges: [Range<Int64>] = []
        func path(_ m: Int64, _ start: Int64, _ end: Int64) {
            let n = end - start
            guard n > 1 else { return }
            let k = split(n)
            if m < k {
                path(m, start, start + k)
                ranges.append(start + k..<end)
            } else {
                path(m - k, start + k, end)
                ranges.append(start..<start + k)
            }
        }
        path(index, 0, size)
        return MerkleProofPlan(ranges: ranges)
    }

    /// The consistency proof from a tree of `oldSize` leaves to one of `newSize` (RFC 9162
    /// §2.1.4.1, `PROOF(m, D[n])`); empty when either size is 0 or they are equal.
    public static func consistencyPlan(from oldSize: Int64, to newSize: Int64) -> MerkleProofPlan {
        precondition(oldSize >= 0 && oldSize <= newSize)
        guard oldSize > 0, oldSize < newSize else { return MerkleProofPlan(ranges: []) }
        var ranges: [Range<Int64>] = []
        func subproof(_ m: Int64, _ start: Int64, _ end: Int64, _ complete: Bool) {
            let n = end - start
            if m == n {
                if !complete { ranges.append(start..<end) }
                return
            }
            let k = split(n)
            if m <= k {
                subproof(m, start, start + k, complete)
                ranges.append(start + k..<end)
            } else {
                subproof(m - k, start + k, end, false)
                ranges.append(start..<start + k)
            }
        }
        subproof(oldSize, 0, newSize, true)
        return MerkleProofPlan(ranges: ranges)
    }
}
