import StepSignCrypto
import StepSignFormat
@testable import StepSignWitness

/// A log for witness tests: leaves in memory, checkpoints signed by its Ed25519 key, RFC 9162
/// roots and consistency proofs computed from the leaves (the tree's shape from
/// ``MerkleTree``, the hashes by the RFC's recursion, nothing stored).
struct TestLog: Sendable {
    let origin: String
    let key: Ed25519PrivateKey
    var leaves: [[UInt8]]

    init(origin: String = "test.example/log", key: Ed25519PrivateKey? = nil, size: Int, tag: String = "a") throws {
        self.origin = origin
        self.key = try key ?? Ed25519PrivateKey.generate()
        self.leaves = (0..<size).map { MerkleHash.leaf(Array("\(tag) entry \($0)".utf8)) }
    }

    var verifierKey: NoteVerifierKey { try! NoteVerifierKey(name: origin, ed25519: key.publicKey) }

    /// The same log (same key) after a rewrite: leaves from `index` on are other ones.
    func forked(at index: Int, tag: String) -> TestLog {
        var copy = self
        for i in index..<leaves.count { copy.leaves[i] = MerkleHash.leaf(Array("\(tag) entry \(i)".utf8)) }
        return copy
    }

    func hash(_ range: Range<Int64>) -> [UInt8] {
        let n = range.count
        if n == 1 { return leaves[Int(range.lowerBound)] }
        var k: Int64 = 1
        while k << 1 < n { k <<= 1 }
        return MerkleHash.node(hash(range.lowerBound..<range.lowerBound + k), hash(range.lowerBound + k..<range.upperBound))
    }

    func root(_ size: Int64) -> [UInt8] { size == 0 ? MerkleHash.emptyRoot : hash(0..<size) }

    func proof(from old: Int64, to new: Int64) -> [[UInt8]] {
        MerkleTree.consistencyPlan(from: old, to: new).ranges.map(hash)
    }

    func checkpoint(_ size: Int64, signedBy signer: Ed25519PrivateKey? = nil) throws -> SignedNote {
        let body = try LogCheckpoint(origin: origin, size: size, rootHash: root(size))
        var note = try SignedNote(text: body.text)
        try note.sign(name: origin, ed25519: signer ?? key)
        return note
    }

    func request(old: Int64, new: Int64) throws -> AddCheckpointRequest {
        AddCheckpointRequest(oldSize: old, proof: proof(from: old, to: new), checkpoint: try checkpoint(new))
    }
}
