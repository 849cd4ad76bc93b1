import StepSignCrypto
import StepSignFormat
import Testing

/// The log's Merkle tree (SPEC §5.5) against RFC 9162's definitions written out literally
/// here, against RFC 6962's published test vectors, and its proofs against the RFC's
/// verification algorithms, with every kind of tampering refused.
@Suite struct MerkleTreeTests {
    /// The RFC 6962 test leaves (certificate-transparency's `merkle_tree_test`).
    static let vectorLeaves: [[UInt8]] = [
        [], [0x00], [0x10], [0x20, 0x21], [0x30, 0x31], [0x40, 0x41, 0x42, 0x43],
        Array(0x50...0x57), Array(0x60...0x6f),
    ]

    /// Their roots for sizes 1…8.
    static let vectorRoots = [
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
        "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
        "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
    ]

    // MARK: RFC 9162 §2.1, written out as the RFC states it

    static func split(_ n: Int) -> Int {
        var k = 1
        while k * 2 < n { k *= 2 }
        return k
    }

    static func mth(_ leaves: ArraySlice<[UInt8]>) -> [UInt8] {
        switch leaves.count {
        case 0: return SHA256.hash([UInt8]())
        case 1: return leaves.first!
        default:
            let k = split(leaves.count)
            return MerkleHash.node(mth(leaves.prefix(k)), mth(leaves.dropFirst(k)))
        }
    }

    static func path(_ m: Int, _ leaves: ArraySlice<[UInt8]>) -> [[UInt8]] {
        guard leaves.count > 1 else { return [] }
        let k = split(leaves.count)
        if m < k { return path(m, leaves.prefix(k)) + [mth(leaves.dropFirst(k))] }
        return path(m - k, leaves.dropFirst(k)) + [mth(leaves.prefix(k))]
    }

    static func subproof(_ m: Int, _ leaves: ArraySlice<[UInt8]>, _ complete: Bool) -> [[UInt8]] {
        let n = leaves.count
        if m == n { return complete ? [] : [mth(leaves)] }
        let k = split(n)
        if m <= k { return subproof(m, leaves.prefix(k), complete) + [mth(leaves.dropFirst(k))] }
        return subproof(m - k, leaves.dropFirst(k), false) + [mth(leaves.prefix(k))]
    }

    /// Leaf hashes of `count` distinct leaves.
    static func leafHashes(_ count: Int) -> [[UInt8]] {
        (0..<count).map { MerkleHash.leaf(Array("entry \($0)".utf8)) }
    }

    /// Every stored node of the tree of `leafHashes`, appended one by one.
    static func storedNodes(_ leafHashes: [[UInt8]]) -> [MerkleNode: [UInt8]] {
        var frontier = MerkleFrontier()
        var stored: [MerkleNode: [UInt8]] = [:]
        for hash in leafHashes {
            for (node, nodeHash) in frontier.append(leafHash: hash) { stored[node] = nodeHash }
        }
        return stored
    }

    static func read(_ plan: MerkleProofPlan, _ stored: [MerkleNode: [UInt8]]) throws -> [[UInt8]] {
        // Only what the plan asks for is handed over, as a store reads it.
        try plan.hashes(Dictionary(uniqueKeysWithValues: plan.nodes.compactMap { node in stored[node].map { (node, $0) } }))
    }

    // MARK: Tests

    @Test func theRFC6962VectorsRootsFromTheFrontierAndFromStoredNodes() throws {
        let hashes = Self.vectorLeaves.map { MerkleHash.leaf($0) }
        let stored = Self.storedNodes(hashes)
        var frontier = MerkleFrontier()
        #expect(frontier.root == MerkleHash.emptyRoot)
        #expect(Hex.encode(MerkleHash.emptyRoot) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        for (size, expected) in Self.vectorRoots.enumerated().map({ ($0 + 1, $1) }) {
            _ = frontier.append(leafHash: hashes[size - 1])
            #expect(Hex.encode(frontier.root) == expected, "size \(size)")
            #expect(Hex.encode(try Self.read(MerkleTree.rootPlan(size: Int64(size)), stored)[0]) == expected)
        }
    }

    @Test func theRFC6962InclusionVectorOfLeafZeroInEight() throws {
        let stored = Self.storedNodes(Self.vectorLeaves.map { MerkleHash.leaf($0) })
        let proof = try Self.read(MerkleTree.inclusionPlan(index: 0, size: 8), stored)
        #expect(proof.map(Hex.encode) == [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ])
    }

    @Test(arguments: Array(1...70) + [127, 128, 129, 255, 256, 257, 300])
    func everyInclusionProofIsTheRFCsAndVerifies(size: Int) throws {
        let hashes = Self.leafHashes(size)
        let stored = Self.storedNodes(hashes)
        let root = Self.mth(hashes[...])
        #expect(try Self.read(MerkleTree.rootPlan(size: Int64(size)), stored) == [root])
        for index in 0..<size {
            let plan = MerkleTree.inclusionPlan(index: Int64(index), size: Int64(size))
            let proof = try Self.read(plan, stored)
            #expect(proof == Self.path(index, hashes[...]), "index \(index) of \(size)")
            #expect(plan.nodes.count <= 2 * 64)
            #expect(MerkleProof.verifyInclusion(leafHash: hashes[index], index: Int64(index), size: Int64(size),
                                                proof: proof, root: root))
        }
    }

    /// (A proof checked against another size with the same root may pass when the tree's shape
    /// is the same: sizes and roots come together from a signed checkpoint, never apart.)
    @Test func aTamperedInclusionProofIsRefused() throws {
        let size = 37
        let hashes = Self.leafHashes(size)
        let stored = Self.storedNodes(hashes)
        let root = Self.mth(hashes[...])
        for index in [0, 1, 16, 31, 32, 36] {
            let proof = try Self.read(MerkleTree.inclusionPlan(index: Int64(index), size: Int64(size)), stored)
            func verifies(_ leaf: [UInt8], _ at: Int, _ of: Int, _ path: [[UInt8]], _ top: [UInt8]) -> Bool {
                MerkleProof.verifyInclusion(leafHash: leaf, index: Int64(at), size: Int64(of), proof: path, root: top)
            }
            #expect(verifies(hashes[index], index, size, proof, root))
            for position in proof.indices {
                var flipped = proof
                flipped[position][7] ^= 0x01
                #expect(!verifies(hashes[index], index, size, flipped, root), "a flipped hash at \(position)")
            }
            #expect(!verifies(hashes[(index + 1) % size], index, size, proof, root), "another leaf")
            #expect(!verifies(hashes[index], index ^ 1, size, proof, root), "another index")
            #expect(!verifies(hashes[index], index, size, proof + [root], root), "a hash too many")
            #expect(!verifies(hashes[index], index, size, Array(proof.dropLast()), root), "a hash too few")
            #expect(!verifies(hashes[index], index, size, proof, Self.mth(hashes.prefix(size - 1))), "another root")
            #expect(!verifies(hashes[index], size, size, proof, root), "an index past the end")
        }
    }

    @Test func everyConsistencyProofIsTheRFCsAndVerifies() throws {
        let hashes = Self.leafHashes(70)
        let stored = Self.storedNodes(hashes)
        for newSize in 1...70 {
            let newRoot = Self.mth(hashes.prefix(newSize))
            for oldSize in 1...newSize {
                let proof = try Self.read(MerkleTree.consistencyPlan(from: Int64(oldSize), to: Int64(newSize)), stored)
                #expect(proof == (oldSize == newSize ? [] : Self.subproof(oldSize, hashes.prefix(newSize), true)),
                        "\(oldSize) → \(newSize)")
                #expect(MerkleProof.verifyConsistency(oldSize: Int64(oldSize), newSize: Int64(newSize),
                                                      oldRoot: Self.mth(hashes.prefix(oldSize)), newRoot: newRoot,
                                                      proof: proof))
            }
        }
    }

    @Test func aConsistencyProofOfAnotherHistoryIsRefused() throws {
        let hashes = Self.leafHashes(40)
        let stored = Self.storedNodes(hashes)
        // Another history: the same first 19 leaves, a different 20th.
        var forked = hashes
        forked[19] = MerkleHash.leaf(Array("rewritten".utf8))
        for (oldSize, newSize) in [(1, 2), (3, 7), (4, 8), (16, 40), (20, 40), (25, 33), (31, 32)] {
            let proof = try Self.read(MerkleTree.consistencyPlan(from: Int64(oldSize), to: Int64(newSize)), stored)
            let oldRoot = Self.mth(hashes.prefix(oldSize)), newRoot = Self.mth(hashes.prefix(newSize))
            func verifies(_ old: Int, _ new: Int, _ oldTop: [UInt8], _ newTop: [UInt8], _ path: [[UInt8]]) -> Bool {
                MerkleProof.verifyConsistency(oldSize: Int64(old), newSize: Int64(new), oldRoot: oldTop, newRoot: newTop, proof: path)
            }
            #expect(verifies(oldSize, newSize, oldRoot, newRoot, proof))
            for position in proof.indices {
                var flipped = proof
                flipped[position][0] ^= 0x80
                #expect(!verifies(oldSize, newSize, oldRoot, newRoot, flipped), "\(oldSize) → \(newSize): flipped \(position)")
            }
            if oldSize >= 20 {
                #expect(!verifies(oldSize, newSize, Self.mth(forked.prefix(oldSize)), newRoot, proof), "a rewritten old tree")
            }
            if newSize >= 20 {
                #expect(!verifies(oldSize, newSize, oldRoot, Self.mth(forked.prefix(newSize)), proof), "a rewritten new tree")
            }
            #expect(!verifies(newSize, oldSize, newRoot, oldRoot, proof), "sizes swapped")
        }
        // Equal sizes: equal roots and no proof; the empty tree: extended by every tree.
        let root = Self.mth(hashes[...])
        #expect(MerkleProof.verifyConsistency(oldSize: 40, newSize: 40, oldRoot: root, newRoot: root, proof: []))
        #expect(!MerkleProof.verifyConsistency(oldSize: 40, newSize: 40, oldRoot: root, newRoot: MerkleHash.emptyRoot, proof: []))
        #expect(MerkleProof.verifyConsistency(oldSize: 0, newSize: 40, oldRoot: MerkleHash.emptyRoot, newRoot: root, proof: []))
    }

    @Test func aFrontierIsReadBackFromStoredNodesAndGoesOn() throws {
        let hashes = Self.leafHashes(100)
        let stored = Self.storedNodes(hashes)
        for size in [0, 1, 2, 3, 31, 32, 33, 64, 99] {
            let edge = MerkleTree.subtrees(of: 0..<Int64(size)).map { stored[$0]! }
            var frontier = try MerkleFrontier(size: Int64(size), hashes: edge)
            for hash in hashes[size...] { _ = frontier.append(leafHash: hash) }
            #expect(frontier.root == Self.mth(hashes[...]) && frontier.size == 100)
        }
        #expect(throws: MerkleTreeError.badFrontier(size: 3, hashes: 1)) {
            try MerkleFrontier(size: 3, hashes: [hashes[0]])
        }
        // A store that lacks a node says which.
        #expect(throws: MerkleTreeError.missingNode(MerkleNode(level: 0, index: 1))) {
            try MerkleTree.inclusionPlan(index: 0, size: 5).hashes([:])
        }
    }

    @Test func appendsWriteTheirNodesAtTheEndOfADenseOrder() {
        // Leaf after leaf, the nodes each append finishes get the storage indexes 0, 1, 2, …
        // with no gap and no repeat: a store keyed by them appends at the end of its index.
        var frontier = MerkleFrontier()
        var next: Int64 = 0
        for hash in Self.leafHashes(1000) {
            for (node, _) in frontier.append(leafHash: hash) {
                #expect(node.storageIndex == next, "\(node)")
                next += 1
            }
        }
        // Go's sumdb/tlog StoredHashIndex for a few known places.
        #expect(MerkleNode(level: 0, index: 0).storageIndex == 0)
        #expect(MerkleNode(level: 0, index: 1).storageIndex == 1)
        #expect(MerkleNode(level: 1, index: 0).storageIndex == 2)
        #expect(MerkleNode(level: 0, index: 2).storageIndex == 3)
        #expect(MerkleNode(level: 2, index: 0).storageIndex == 6)
    }

    @Test func anAppendStoresAtMostLogNNodesAndAProofReadsAtMostTwoPerLevel() {
        var frontier = MerkleFrontier()
        var most = 0
        for hash in Self.leafHashes(4096) { most = max(most, frontier.append(leafHash: hash).count) }
        #expect(most == 13)  // leaf 4095 completes subtrees of levels 0…12
        for size: Int64 in [1 << 20, (1 << 20) + 1, 1_000_003, (1 << 40) - 1] {
            for index in [0, size / 2, size - 1] {
                #expect(MerkleTree.inclusionPlan(index: index, size: size).nodes.count <= 2 * 41)
            }
            #expect(MerkleTree.consistencyPlan(from: size / 3, to: size).nodes.count <= 3 * 41)
        }
    }
}
