import Foundation
import StepSignCrypto
import StepSignTestSupport
import Testing

/// The log key's algorithm (SPEC §5.5): RFC 8032's test vectors, PKCS#8 round trips, and
/// signatures checked by the openssl CLI and by `cryptography`, both ways.
@Suite struct Ed25519KeyTests {
    /// RFC 8032 §7.1, TEST 1 and TEST 2.
    static let vectors: [(seed: String, publicKey: String, message: String, signature: String)] = [
        ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
         "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
         "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
        ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
         "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
         "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
    ]

    @Test func rfc8032Vectors() throws {
        for vector in Self.vectors {
            let key = try Ed25519PrivateKey(seed: try #require(Hex.decode(vector.seed)))
            let message = try #require(Hex.decode(vector.message))
            #expect(Hex.encode(key.publicKey.raw) == vector.publicKey)
            #expect(Hex.encode(try key.signature(for: message)) == vector.signature)
            #expect(key.publicKey.isValidSignature(try #require(Hex.decode(vector.signature)), for: message))
        }
    }

    @Test func aSignatureOfAnotherMessageOrKeyOrAFlippedBitIsRefused() throws {
        let key = try Ed25519PrivateKey.generate()
        let other = try Ed25519PrivateKey.generate()
        let message = Array("stepsign.example/log\n42\n".utf8)
        let signature = try key.signature(for: message)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        #expect(!key.publicKey.isValidSignature(signature, for: message + [0x0a]))
        #expect(!other.publicKey.isValidSignature(signature, for: message))
        var flipped = signature
        flipped[10] ^= 0x04
        #expect(!key.publicKey.isValidSignature(flipped, for: message))
        #expect(!key.publicKey.isValidSignature(Array(signature.dropLast()), for: message))
        #expect(throws: P256KeyError.self) { try Ed25519PublicKey(raw: [1, 2, 3]) }
    }

    @Test func pkcs8RoundTripsPlainAndEncrypted() throws {
        let key = try Ed25519PrivateKey.generate()
        let plain = try key.pkcs8PEM()
        #expect(plain.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(try Ed25519PrivateKey(pkcs8PEM: plain).publicKey == key.publicKey)
        let encrypted = try key.pkcs8PEM(passphrase: Array("correct horse".utf8))
        #expect(encrypted.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
        #expect(try Ed25519PrivateKey(pkcs8PEM: encrypted, passphrase: Array("correct horse".utf8)).publicKey == key.publicKey)
        #expect(throws: P256KeyError.passphraseRequired) { try Ed25519PrivateKey(pkcs8PEM: encrypted) }
        #expect(throws: P256KeyError.decryptionFailed) {
            try Ed25519PrivateKey(pkcs8PEM: encrypted, passphrase: Array("wrong".utf8))
        }
        // A P-256 key is not an Ed25519 key, and the other way round.
        #expect(throws: P256KeyError.unsupportedKey("not an Ed25519 key")) {
            try Ed25519PrivateKey(pkcs8PEM: try P256PrivateKey.generate().pkcs8PEM())
        }
        #expect(throws: P256KeyError.self) { try P256PrivateKey(pkcs8PEM: plain) }
    }

    @Test func signaturesCrossCheckWithTheOpenSSLCLI() throws {
        let key = try Ed25519PrivateKey.generate()
        let dir = try TemporaryDirectory("tests").url
        defer { try? FileManager.default.removeItem(at: dir) }
        let priv = dir.appendingPathComponent("key.pem"), msg = dir.appendingPathComponent("msg")
        let sig = dir.appendingPathComponent("sig"), pub = dir.appendingPathComponent("pub.pem")
        try key.pkcs8PEM().write(to: priv, atomically: true, encoding: .utf8)
        let message = Array("a note text\nwith two lines\n".utf8)
        try Data(message).write(to: msg)
        // Ours, verified by openssl.
        try Data(try key.signature(for: message)).write(to: sig)
        try #require(try Tools.run(["openssl", "pkey", "-in", priv.path, "-pubout", "-out", pub.path]).status == 0)
        let verified = try Tools.run(["openssl", "pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", pub.path,
                                      "-in", msg.path, "-sigfile", sig.path])
        #expect(verified.status == 0 && verified.stdout.contains("Signature Verified Successfully"), "\(verified.stderr)")
        // openssl's, verified here.
        let signed = try Tools.run(["openssl", "pkeyutl", "-sign", "-rawin", "-inkey", priv.path, "-in", msg.path,
                                    "-out", sig.path])
        try #require(signed.status == 0, "\(signed.stderr)")
        #expect(key.publicKey.isValidSignature(Array(try Data(contentsOf: sig)), for: message))
    }

    @Test func signaturesCrossCheckWithCryptography() throws {
        let key = try Ed25519PrivateKey.generate()
        let message = "checked by cryptography"
        let script = """
            import sys
            from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey, Ed25519PrivateKey
            public = Ed25519PublicKey.from_public_bytes(bytes.fromhex(sys.argv[1]))
            public.verify(bytes.fromhex(sys.argv[2]), sys.argv[3].encode())
            theirs = Ed25519PrivateKey.generate()
            raw = theirs.private_bytes_raw()
            print(raw.hex(), theirs.sign(sys.argv[3].encode()).hex())
            """
        let result = try Tools.python(script, Hex.encode(key.publicKey.raw), Hex.encode(try key.signature(for: Array(message.utf8))),
                                      message)
        try #require(result.status == 0, "\(result.stderr)")
        let parts = result.stdout.split(separator: " ").map { String($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        let theirs = try Ed25519PrivateKey(seed: try #require(Hex.decode(parts[0])))
        #expect(theirs.publicKey.isValidSignature(try #require(Hex.decode(parts[1])), for: Array(message.utf8)))
    }
}
