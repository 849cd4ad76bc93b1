/// Checks the proofs of RFC 9162 §2.1.3.2 and §2.1.4.2 against roots a verifier trusts (from
/// a signed checkpoint), with nothing else from the log.
public enum MerkleProof {
    /// Whether `proof` shows the leaf with hash `leafHash` at `index` in the tree of `size`
    /// leaves whose root is `root`.
    public static func verifyInclusion(leafHash: [UInt8], index: Int64, size: Int64, proof: [[UInt8]],
                                       root: [UInt8]) -> Bool {
        guard index >= 0, index < size, proof.allSatisfy({ $0.count == MerkleHash.size }) else { return false }
        var fn = index
        var sn = size - 1
        var hash = leafHash
        for sibling in proof {
            guard sn != 0 else { return false }
            if fn & 1 == 1 || fn == sn {
                hash = MerkleHash.node(sibling, hash)
                if fn & 1 == 0 { shiftToOdd(&fn, &sn) }
            } else {
                hash = MerkleHash.node(hash, sibling)
            }
            fn >>= 1
            sn >>= 1
        }
        return sn == 0 && hash == root
    }

    /// Whether `proof` shows that the tree of `newSize` leaves with root `newRoot` extends the
    /// tree of `oldSize` leaves with root `oldRoot` (the log only grew). Equal sizes need equal
    /// roots and no proof; the empty tree is extended by every tree.
    public static func verifyConsistency(oldSize: Int64, newSize: Int64, oldRoot: [UInt8], newRoot: [UInt8],
                                         proof: [[UInt8]]) -> Bool {
        guard oldSize >= 0, oldSize <= newSize, proof.allSatisfy({ $0.count == MerkleHash.size }) else { return false }
        if oldSize == newSize { return proof.isEmpty && oldRoot == newRoot }
        if oldSize == 0 { return proof.isEmpty }
        guard !proof.isEmpty else { return false }
        var path = proof
        // A power-of-two old tree is a complete subtree of the new one: its root starts the path.
        if oldSize & (oldSize - 1) == 0 { path.insert(oldRoot, at: 0) }
        var fn = oldSize - 1
        var sn = newSize - 1
        while fn & 1 == 1 {
            fn >>= 1
            sn >>= 1
        }
        var oldHash = path[0]
        var newHash = path[0]
        for hash in path.dropFirst() {
            guard sn != 0 else { return false }
            if fn & 1 == 1 || fn == sn {
                oldHash = MerkleHash.node(hash, oldHash)
                newHash = MerkleHash.node(hash, newHash)
                if fn & 1 == 0 { shiftToOdd(&fn, &sn) }
            } else {
                newHash = MerkleHash.node(newHash, hash)
            }
            fn >>= 1
            sn >>= 1
        }
        return sn == 0 && oldHash == oldRoot && newHash == newRoot
    }

    /// Right-shifts both until `fn`'s lowest bit is set or it is 0 (RFC 9162: "right-shift both
    /// fn and sn equally until either LSB(fn) is set or fn is 0"); `fn` is even and not 0.
    private static func shiftToOdd(_ fn: inout Int64, _ sn: inout Int64) {
        repeat {
            fn >>= 1
            sn >>= 1
        } while fn & 1 == 0 && fn != 0
    }
}
