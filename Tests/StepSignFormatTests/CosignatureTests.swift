import StepSignCrypto
import StepSignFormat
import StepSignTestSupport
import Testing

/// Witnesses' C2SP tlog-cosignatures v1 (SPEC §5.6): the line's bytes and signed message as the
/// specification lays them out, byte for byte against Python's `cryptography` following it by
/// hand, and the verifier's rules: lines of unknown keys ignored, a bad line of a known witness
/// not counted, each witness once, and a proof's quorum.
@Suite struct CosignatureTests {
    static let origin = "stepsign.example/cosigned"
    static let text = origin + "\n5\n" + Base64.encode([UInt8](repeating: 9, count: 32)) + "\n"

    static func witness(_ name: String, seed: UInt8) throws -> (key: Ed25519PrivateKey, vkey: NoteVerifierKey) {
        let key = try Ed25519PrivateKey(seed: [UInt8](repeating: seed, count: 32))
        return (key, try NoteVerifierKey(name: name, ed25519: key.publicKey, type: .cosignatureV1))
    }

    @Test func theLineIsTheSpecificationsAsCryptographyComputesIt() throws {
        let (key, vkey) = try Self.witness("witness.example/w1", seed: 7)
        var note = try SignedNote(text: Self.text)
        try note.cosign(name: "witness.example/w1", key: key, timestamp: 1_679_315_147)
        let ours = try #require(note.signatures.first).line
        // The same line from the specification's text: key ID SHA-256(name ‖ 0x0A ‖ 0x04 ‖ key)[:4],
        // then the timestamp as a big-endian u64, then Ed25519 over "cosignature/v1", "time T"
        // and the note's text.
        let script = """
            import base64, hashlib, struct, sys
            from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
            from cryptography.hazmat.primitives import serialization
            key = Ed25519PrivateKey.from_private_bytes(bytes([7]) * 32)
            raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
            name, text, t = sys.argv[1], sys.argv[2], int(sys.argv[3])
            key_id = hashlib.sha256(name.encode() + b"\\n\\x04" + raw).digest()[:4]
            signature = key.sign(b"cosignature/v1\\ntime %d\\n" % t + text.encode())
            print("\\u2014 " + name + " " + base64.b64encode(key_id + struct.pack(">Q", t) + signature).decode())
            print(name + "+" + key_id.hex() + "+" + base64.b64encode(b"\\x04" + raw).decode())
            """
        let result = try Tools.python(script, "witness.example/w1", Self.text, "1679315147")
        try #require(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines == [ours, vkey.description])
        let parsed = try SignedNote(parsing: Self.text + "\n" + lines[0] + "\n")
        #expect(parsed.cosigners([vkey]).map(\.timestamp) == [1_679_315_147])
    }

    @Test func onlyValidCosignaturesOfKnownWitnessesCountEachOnce() throws {
        let w1 = try Self.witness("witness.example/w1", seed: 1)
        let w2 = try Self.witness("witness.example/w2", seed: 2)
        let stranger = try Self.witness("witness.example/w3", seed: 3)
        var note = try SignedNote(text: Self.text)
        try note.cosign(name: "witness.example/w1", key: w1.key, timestamp: 100)
        try note.cosign(name: "witness.example/w1", key: w1.key, timestamp: 200)
        try note.cosign(name: "witness.example/w3", key: stranger.key, timestamp: 100)
        #expect(note.cosigners([w1.vkey, w2.vkey]).map(\.key) == [w1.vkey])
        // A second valid line of w1 does not make two witnesses.
        #expect(note.cosigners([w1.vkey, w2.vkey, stranger.vkey]).count == 2)
        // w2's name with another key: not w2's.
        var forged = try SignedNote(text: Self.text)
        try forged.cosign(name: "witness.example/w2", key: stranger.key, timestamp: 100)
        #expect(forged.cosigners([w2.vkey]).isEmpty)
        // A cosignature whose timestamp was changed after signing does not verify.
        var changed = try SignedNote(text: Self.text)
        var line = try Cosignature.sign(text: Array(Self.text.utf8), key: w2.key, timestamp: 100)
        line.timestamp = 101
        changed.add(SignedNote.Signature(name: "witness.example/w2", keyID: w2.vkey.keyID, bytes: line.bytes))
        #expect(changed.cosigners([w2.vkey]).isEmpty)
        // A log key's signature (type 0x01, over the text alone) is not a cosignature.
        let asLogKey = try NoteVerifierKey(name: "witness.example/w2", ed25519: w2.key.publicKey)
        var logSigned = try SignedNote(text: Self.text)
        try logSigned.sign(name: "witness.example/w2", ed25519: w2.key)
        #expect(logSigned.cosigners([w2.vkey, asLogKey]).isEmpty)
        // Another text: none verify.
        var other = try SignedNote(text: Self.origin + "\n6\n" + Base64.encode([UInt8](repeating: 9, count: 32)) + "\n")
        for signature in note.signatures { other.add(signature) }
        #expect(other.cosigners([w1.vkey, stranger.vkey]).isEmpty)
    }

    @Test func timestampsAndSizesOutsideTheFormatAreRefused() throws {
        #expect(throws: NoteError.self) { try Cosignature(timestamp: UInt64(Int64.max) + 1, signature: [UInt8](repeating: 0, count: 64)) }
        #expect(throws: NoteError.self) { try Cosignature(bytes: [UInt8](repeating: 0, count: 71)) }
        #expect(throws: NoteError.self) { try Cosignature(bytes: [UInt8](repeating: 0xff, count: 72)) }
        let max = try Cosignature(timestamp: UInt64(Int64.max), signature: [UInt8](repeating: 1, count: 64))
        #expect(try Cosignature(bytes: max.bytes) == max)
    }

    @Test func aProofNeedsItsQuorumOfWitnesses() throws {
        let log = try TlogProofTests.Log(size: 6)
        var proof = try log.proof(4)
        let w1 = try Self.witness("witness.example/w1", seed: 1)
        let w2 = try Self.witness("witness.example/w2", seed: 2)
        var note = proof.checkpoint
        try note.cosign(name: "witness.example/w1", key: w1.key, timestamp: 100)
        proof.checkpoint = note
        let parsed = try TlogProof(parsing: proof.serialized)
        #expect(throws: Never.self) {
            try parsed.verify(leaf: log.leaves[4], logKeys: [log.verifier], witnesses: [w1.vkey, w2.vkey], quorum: 1)
        }
        #expect(throws: NoteError.self) {
            try parsed.verify(leaf: log.leaves[4], logKeys: [log.verifier], witnesses: [w1.vkey, w2.vkey], quorum: 2)
        }
        // Cosignatures never stand in for the log's own signature.
        #expect(throws: NoteError.self) {
            try parsed.verify(leaf: log.leaves[4], logKeys: [], witnesses: [w1.vkey], quorum: 1)
        }
    }
}
