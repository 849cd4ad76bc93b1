import StepSignCrypto
import StepSignFormat
import Testing

/// C2SP tlog-proof files (SPEC §5.5): written and read byte for byte as the specification's
/// example lays them out, and checked by its steps (origin, log signature, path), with every
/// refusal a verifier needs.
@Suite struct TlogProofTests {
    static let origin = "stepsign.example/proofs"

    /// A log of `size` leaves "entry 0", "entry 1", …, its root, and a checkpoint of it signed by
    /// a new Ed25519 log key under `origin`.
    struct Log {
        var leaves: [[UInt8]]
        var key: Ed25519PrivateKey
        var verifier: NoteVerifierKey
        var note: SignedNote

        init(size: Int, origin: String = TlogProofTests.origin) throws {
            leaves = (0..<size).map { Array("entry \($0)".utf8) }
            key = try Ed25519PrivateKey.generate()
            verifier = try NoteVerifierKey(name: origin, ed25519: key.publicKey)
            let root = MerkleTreeTests.mth(leaves.map { MerkleHash.leaf($0) }[...])
            note = try SignedNote(text: LogCheckpoint(origin: origin, size: Int64(size), rootHash: root).text)
            try note.sign(name: origin, ed25519: key)
        }

        func proof(_ index: Int) throws -> TlogProof {
            let path = MerkleTreeTests.path(index, leaves.map { MerkleHash.leaf($0) }[...])
            return try TlogProof(index: Int64(index), hashes: path, checkpoint: note)
        }
    }

    @Test func theFileIsTheSpecificationsLayout() throws {
        let log = try Log(size: 5)
        let proof = try log.proof(3)
        let lines = ["c2sp.org/tlog-proof@v1", "index 3"] + proof.hashes.map { Base64.encode($0) }
        #expect(proof.serialized == lines.map { $0 + "\n" }.joined() + "\n" + log.note.serialized)
        #expect(try TlogProof(parsing: proof.serialized) == proof)
        // The optional extra line comes before the index, and is carried as is.
        var extra = proof
        extra.extra = Array("age-v1.2.1".utf8)
        #expect(extra.serialized.hasPrefix("c2sp.org/tlog-proof@v1\nextra YWdlLXYxLjIuMQ==\nindex 3\n"))
        #expect(try TlogProof(parsing: extra.serialized) == extra)
        // A one-leaf tree has an empty path: the blank line follows the index.
        let single = try Log(size: 1).proof(0)
        #expect(single.serialized.hasPrefix("c2sp.org/tlog-proof@v1\nindex 0\n\n\(Self.origin)\n1\n"))
        #expect(try TlogProof(parsing: single.serialized) == single)
    }

    @Test(arguments: [1, 2, 3, 7, 8, 9, 31, 32, 33, 100])
    func everyLeafVerifiesAgainstTheSignedCheckpoint(size: Int) throws {
        let log = try Log(size: size)
        for index in 0..<size {
            let proof = try TlogProof(parsing: try log.proof(index).serialized)
            let checkpoint = try proof.verify(leaf: log.leaves[index], logKeys: [log.verifier])
            #expect(checkpoint.size == Int64(size) && checkpoint.origin == Self.origin)
        }
    }

    @Test func aProofOfAnotherLeafIndexPathOrTreeIsRefused() throws {
        let log = try Log(size: 13)
        let proof = try log.proof(6)
        #expect(throws: NoteError.self) { try proof.verify(leaf: log.leaves[5], logKeys: [log.verifier]) }
        var wrongIndex = proof
        wrongIndex.index = 7
        #expect(throws: NoteError.self) { try wrongIndex.verify(leaf: log.leaves[6], logKeys: [log.verifier]) }
        wrongIndex.index = 13
        #expect(throws: NoteError.self) { try wrongIndex.verify(leaf: log.leaves[6], logKeys: [log.verifier]) }
        for position in proof.hashes.indices {
            var flipped = proof
            flipped.hashes[position][0] ^= 0x80
            #expect(throws: NoteError.self) { try flipped.verify(leaf: log.leaves[6], logKeys: [log.verifier]) }
        }
        var truncated = proof
        truncated.hashes.removeLast()
        #expect(throws: NoteError.self) { try truncated.verify(leaf: log.leaves[6], logKeys: [log.verifier]) }
        var extended = proof
        extended.hashes.append(proof.hashes[0])
        #expect(throws: NoteError.self) { try extended.verify(leaf: log.leaves[6], logKeys: [log.verifier]) }
        // The right path, under the checkpoint of a bigger tree signed by the same key: refused.
        let bigger = try Log(size: 14)
        var otherTree = proof
        var note = try SignedNote(text: bigger.note.text)
        try note.sign(name: Self.origin, ed25519: log.key)
        otherTree.checkpoint = note
        #expect(throws: NoteError.self) { try otherTree.verify(leaf: log.leaves[6], logKeys: [log.verifier]) }
    }

    @Test func onlyALogKeyNamedAsTheOriginCounts() throws {
        let log = try Log(size: 4)
        let proof = try log.proof(2)
        // Another key under the origin's name: the checkpoint is not signed by it.
        let stranger = try NoteVerifierKey(name: Self.origin, ed25519: try Ed25519PrivateKey.generate().publicKey)
        #expect(throws: NoteError.notVerified("no signature of a trusted key")) {
            try proof.verify(leaf: log.leaves[2], logKeys: [stranger])
        }
        // The right key bytes under another name: a key of another origin does not count.
        let renamed = try NoteVerifierKey(name: "stepsign.example/other", ed25519: log.key.publicKey)
        #expect(throws: NoteError.self) { try proof.verify(leaf: log.leaves[2], logKeys: [renamed]) }
        // A checkpoint of another origin signed by a key of that origin: not this log's.
        let other = try Log(size: 4, origin: "stepsign.example/other")
        #expect(throws: NoteError.self) { try other.proof(2).verify(leaf: other.leaves[2], logKeys: [log.verifier]) }
        // A witness's cosignature key is never a log key.
        let witness = try NoteVerifierKey(name: Self.origin, ed25519: log.key.publicKey, type: .cosignatureV1)
        #expect(throws: NoteError.self) { try proof.verify(leaf: log.leaves[2], logKeys: [witness]) }
        // A tampered checkpoint body fails the log key's signature.
        let text = proof.serialized
        let rootLine = Base64.encode(try LogCheckpoint(text: log.note.text).rootHash)
        var root = try #require(Base64.decode(rootLine))
        root[31] ^= 1
        let tampered = try TlogProof(parsing: text.replacingOccurrences(of: rootLine, with: Base64.encode(root)))
        #expect(throws: NoteError.self) { try tampered.verify(leaf: log.leaves[2], logKeys: [log.verifier]) }
    }

    @Test func malformedFilesAreRefusedWithAReason() throws {
        let good = try Log(size: 6).proof(4).serialized
        let hash = Base64.encode([UInt8](repeating: 1, count: 32))
        let note = try Log(size: 6).note.serialized
        let bad = [
            "",
            "c2sp.org/tlog-proof@v2\nindex 1\n\n" + note,
            "c2sp.org/tlog-proof@v1\n\n" + note,
            "c2sp.org/tlog-proof@v1\nindex 01\n\n" + note,
            "c2sp.org/tlog-proof@v1\nindex -1\n\n" + note,
            "c2sp.org/tlog-proof@v1\nindex 1 \n\n" + note,
            "c2sp.org/tlog-proof@v1\nindex 99999999999999999999\n\n" + note,
            "c2sp.org/tlog-proof@v1\nindex 1\n" + hash.dropLast(2) + "\n\n" + note,
            "c2sp.org/tlog-proof@v1\nindex 1\n" + hash + "x\n\n" + note,
            "c2sp.org/tlog-proof@v1\nextra !!\nindex 1\n\n" + note,
            "c2sp.org/tlog-proof@v1\nindex 1\nextra AA==\n\n" + note,
            "c2sp.org/tlog-proof@v1\nindex 1\n" + String(repeating: hash + "\n", count: 64) + "\n" + note,
            "c2sp.org/tlog-proof@v1\nindex 1\n" + hash + "\n",
            "c2sp.org/tlog-proof@v1\nindex 1\n\nnot a note\n",
            String(good.dropLast()),
            String(repeating: "x", count: TlogProof.maxSize + 1),
        ]
        for text in bad {
            #expect(throws: NoteError.self, "\(text.prefix(80))") { try TlogProof(parsing: text) }
        }
    }
}
