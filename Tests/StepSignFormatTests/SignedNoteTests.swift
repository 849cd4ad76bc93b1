import Foundation
import StepSignCrypto
import StepSignFormat
import Testing

/// C2SP signed notes and tlog-checkpoints (SPEC §5.5) against golang.org/x/mod/sumdb/note's
/// published example, byte for byte, and every refusal the specifications ask for.
@Suite struct SignedNoteTests {
    // golang.org/x/mod/sumdb/note's package example.
    static let goVerifierKey = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
    static let goSignerKeyBlob = "AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
    static let goText = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
    static let goNote = goText + "\n\u{2014} PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"

    @Test func goSumdbNoteExampleVerifiesAndSigningReproducesIt() throws {
        let key = try NoteVerifierKey(Self.goVerifierKey)
        #expect(key.name == "PeterNeumann" && key.keyID == 0xc74f_20a3 && key.type == .ed25519)
        #expect(key.description == Self.goVerifierKey)
        let note = try SignedNote(parsing: Self.goNote)
        #expect(note.text == Self.goText)
        #expect(try note.verifiedKeys([key]) == [key])
        // Ed25519 is deterministic: our signature with the same key is the same line.
        let blob = try #require(Base64.decode(Self.goSignerKeyBlob))
        #expect(blob.first == 0x01)
        var ours = try SignedNote(text: Self.goText)
        try ours.sign(name: "PeterNeumann", ed25519: try Ed25519PrivateKey(seed: Array(blob.dropFirst())))
        #expect(ours.serialized == Self.goNote)
    }

    @Test func aP256SignatureOfType2UsesTheSPKIKeyIDAndVerifies() throws {
        let key = try P256PrivateKey.generate()
        var note = try SignedNote(text: "stepsign.example/a\n3\n" + Base64.encode([UInt8](repeating: 7, count: 32)) + "\n")
        try note.sign(name: "stepsign.example/a", p256: key)
        let verifier = try NoteVerifierKey(name: "stepsign.example/a", p256: key.publicKey)
        let der = try #require(Base64.decode(key.publicKey.spkiPEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()))
        #expect(verifier.keyID == SHA256.hash(der).prefix(4).reduce(0) { $0 << 8 | UInt32($1) })
        let parsed = try SignedNote(parsing: note.serialized)
        #expect(try parsed.verifiedKeys([verifier]) == [verifier])
        #expect(try NoteVerifierKey(verifier.description) == verifier)
    }

    @Test func unknownKeysAreIgnoredAndAFailingKnownOneRejectsTheNote() throws {
        let log = try Ed25519PrivateKey.generate(), other = try Ed25519PrivateKey.generate()
        let logKey = try NoteVerifierKey(name: "log.example", ed25519: log.publicKey)
        let otherKey = try NoteVerifierKey(name: "other.example", ed25519: other.publicKey)
        var note = try SignedNote(text: "hello\n")
        try note.sign(name: "log.example", ed25519: log)
        try note.sign(name: "other.example", ed25519: other)
        #expect(try note.verifiedKeys([logKey]) == [logKey])
        #expect(try note.verifiedKeys([logKey, otherKey]) == [logKey, otherKey])
        #expect(throws: NoteError.notVerified("no signature of a trusted key")) {
            try note.verifiedKeys([try NoteVerifierKey(name: "log.example", ed25519: other.publicKey)])
        }
        // A known key's bad signature: the note is rejected, whatever else verifies.
        var tampered = try SignedNote(parsing: note.serialized.replacingOccurrences(of: "hello", with: "hellp"))
        #expect(throws: NoteError.self) { try tampered.verifiedKeys([logKey]) }
        tampered = try SignedNote(parsing: note.serialized)
        var forged = tampered.signatures[1]
        forged.bytes[3] ^= 1
        tampered.add(forged)
        #expect(throws: NoteError.notVerified("the signature of other.example does not verify")) {
            try tampered.verifiedKeys([logKey, otherKey])
        }
    }

    @Test(arguments: [
        "no blank line\n\u{2014} a AAAAAQ==\n",
        "text\n\n\u{2014} a AAAAAQ==",                  // no final newline
        "text\n\n- a AAAAAQ==\n",                      // not an em dash
        "text\n\n\u{2014} a AAAAAQ\n",                 // unpadded base64
        "text\n\n\u{2014} a AAAA\n",                   // a key ID and no signature
        "text\n\n\u{2014} a b AAAAAQ==\n",             // a space in the name
        "text\n\n\u{2014} a+b AAAAAQ==\n",             // a plus in the name
        "te\u{7}xt\n\n\u{2014} a AAAAAQ==\n",          // a control character
        "te\rxt\n\n\u{2014} a AAAAAQ==\n",
        "text\n\n",                                    // no signature
        "text\n\n\u{2014} a AAAAAQ==\n\n",             // a blank line after the signatures
    ])
    func malformedNotesAreRefused(_ text: String) {
        #expect(throws: NoteError.self) { try SignedNote(parsing: text) }
    }

    @Test func aNoteWithTooManySignaturesIsRefused() throws {
        let lines = (0...SignedNote.maxSignatures).map { _ in "\u{2014} a AAAAAAE=\n" }.joined()
        #expect(throws: NoteError.malformed("more than \(SignedNote.maxSignatures) signatures")) {
            try SignedNote(parsing: "text\n\n" + lines)
        }
    }

    @Test func verifierKeysAreReadStrictly() throws {
        let good = Self.goVerifierKey
        for bad in [good.replacingOccurrences(of: "c74f20a3", with: "c74f20a4"),   // another key ID
                    good.replacingOccurrences(of: "c74f20a3", with: "C74F20A3"),   // upper-case hex
                    good.replacingOccurrences(of: "+ARpc", with: "+AhRpc"),        // a mangled key
                    "PeterNeumann+c74f20a3", "+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
                    good + "="] {
            #expect(throws: NoteError.self, "\(bad)") { try NoteVerifierKey(bad) }
        }
    }

    @Test func checkpointsAreTheC2SPBody() throws {
        let root = (0..<32).map { UInt8($0) }
        let checkpoint = try LogCheckpoint(origin: "stepsign.host.example/signer-1", size: 1042, rootHash: root)
        #expect(checkpoint.text == "stepsign.host.example/signer-1\n1042\n" + Base64.encode(root) + "\n")
        #expect(try LogCheckpoint(text: checkpoint.text) == checkpoint)
        let withExtension = checkpoint.text + "ext line\n"
        #expect(try LogCheckpoint(text: withExtension).extensions == ["ext line"])
        for bad in ["o\n01\n\(Base64.encode(root))\n", "o\n-1\n\(Base64.encode(root))\n", "o\n1\n\(Base64.encode(root.dropLast()))\n",
                    "o\n1\n", "\n1\n\(Base64.encode(root))\n", "o\n1\n\(Base64.encode(root))", "o\n 1\n\(Base64.encode(root))\n"] {
            #expect(throws: NoteError.self, "\(bad)") { try LogCheckpoint(text: bad) }
        }
    }

    @Test func base64IsStrict() {
        #expect(Base64.encode(Array("fo".utf8)) == "Zm8=" && Base64.encode([0xfb, 0xff]) == "+/8=")
        #expect(Base64.decode("Zm8=") == Array("fo".utf8) && Base64.decode("+/8=") == [0xfb, 0xff])
        for bad in ["Zm8", "Zm9=", "Zm8==", "-_8=", "Z m8=", "Zg=a", "Zg==="] {
            #expect(Base64.decode(bad) == nil, "\(bad)")
        }
        #expect(Base64.decode("") == [])
    }
}
