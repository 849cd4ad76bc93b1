import Foundation
import StepSignCrypto
import StepSignFormat
import StepSignTestSupport
import Testing

/// stepsign's RFC 9162 verifiers (``MerkleProof``) against vectors nobody here computed:
/// `Tests/Vectors/generate_merkle.py` builds them with pymerkle (roots and audit paths of 300
/// leaves; consistency proofs written out from the RFC over pymerkle's roots) when the test
/// runs, with every negative case a verifier must refuse: size 0, index = size, paths cut short
/// or extended, flipped hashes, another leaf, root or index.
@Suite struct MerkleVectorTests {
    struct Inclusion: Decodable {
        var index: Int64
        var size: Int64
        var leaf: Int
        var path: [String]
        var root: String
        var why: String?
    }

    struct Consistency: Decodable {
        var old: Int64
        var new: Int64
        var proof: [String]
        var oldRoot: String
        var newRoot: String
        var why: String?
    }

    struct Vectors: Decodable {
        var leaves: Int
        var roots: [String]
        var inclusion: [Inclusion]
        var badInclusion: [Inclusion]
        var consistency: [Consistency]
        var badConsistency: [Consistency]
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/generate_merkle.py").path

    let vectors: Vectors

    init() throws {
        let result = try Tools.run(["python3", Self.script])
        try #require(result.status == 0, "generate-merkle.py (needs pymerkle, scripts/setup): \(result.stderr)")
        vectors = try JSONDecoder().decode(Vectors.self, from: Data(result.stdout.utf8))
    }

    static func bytes(_ hex: String) throws -> [UInt8] { try #require(Hex.decode(hex)) }

    func leafHash(_ index: Int) -> [UInt8] { MerkleHash.leaf(Array("leaf \(index)".utf8)) }

    @Test func rootsOfEverySizeAreRecomputedFromTheLeaves() throws {
        var frontier = MerkleFrontier()
        #expect(frontier.root == (try Self.bytes(vectors.roots[0])))
        for size in 1...vectors.leaves {
            _ = frontier.append(leafHash: leafHash(size - 1))
            #expect(frontier.root == (try Self.bytes(vectors.roots[size])), "root of \(size)")
        }
    }

    @Test func everyInclusionProofVerifiesAndEveryNegativeIsRefused() throws {
        #expect(vectors.inclusion.count > 200 && vectors.badInclusion.count > 500)
        for vector in vectors.inclusion {
            #expect(MerkleProof.verifyInclusion(leafHash: leafHash(vector.leaf), index: vector.index, size: vector.size,
                                                proof: try vector.path.map(Self.bytes), root: try Self.bytes(vector.root)),
                    "leaf \(vector.index) of \(vector.size)")
        }
        for vector in vectors.badInclusion {
            #expect(!MerkleProof.verifyInclusion(leafHash: leafHash(vector.leaf), index: vector.index, size: vector.size,
                                                 proof: try vector.path.map(Self.bytes), root: try Self.bytes(vector.root)),
                    "\(vector.why ?? "") at leaf \(vector.index) of \(vector.size)")
        }
    }

    @Test func everyConsistencyProofVerifiesAndEveryNegativeIsRefused() throws {
        #expect(vectors.consistency.count > 300 && vectors.badConsistency.count > 300)
        for vector in vectors.consistency {
            #expect(MerkleProof.verifyConsistency(oldSize: vector.old, newSize: vector.new, oldRoot: try Self.bytes(vector.oldRoot),
                                                  newRoot: try Self.bytes(vector.newRoot), proof: try vector.proof.map(Self.bytes)),
                    "\(vector.old) to \(vector.new)")
        }
        for vector in vectors.badConsistency {
            #expect(!MerkleProof.verifyConsistency(oldSize: vector.old, newSize: vector.new, oldRoot: try Self.bytes(vector.oldRoot),
                                                   newRoot: try Self.bytes(vector.newRoot), proof: try vector.proof.map(Self.bytes)),
                    "\(vector.why ?? "") from \(vector.old) to \(vector.new)")
        }
    }
}
