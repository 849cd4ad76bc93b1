import Foundation
import StepSignTestSupport
import StepSignCrypto
import Testing

@Suite("P-256 keys: PEM, JWK, ES256")
struct P256KeyTests {
    @Test("a signature is 64 bytes and verifies with the public key")
    func signAndVerify() throws {
        let key = try P256PrivateKey.generate()
        let message = Array("hello".utf8)
        let signature = try key.signatureES256(for: message)
        #expect(signature.count == 64)
        #expect(key.publicKey.isValidSignatureES256(signature, for: message))
    }

    @Test("a changed message, signature or key does not verify")
    func tamperingFails() throws {
        let key = try P256PrivateKey.generate(), other = try P256PrivateKey.generate()
        let message = Array("hello".utf8)
        var signature = try key.signatureES256(for: message)
        #expect(!key.publicKey.isValidSignatureES256(signature, for: Array("hellO".utf8)))
        #expect(!other.publicKey.isValidSignatureES256(signature, for: message))
        signature[10] ^= 1
        #expect(!key.publicKey.isValidSignatureES256(signature, for: message))
    }

    @Test("signatures of the wrong length are invalid, not an error", arguments: [0, 63, 65, 72])
    func wrongLengthIsFalse(count: Int) throws {
        let key = try P256PrivateKey.generate()
        #expect(!key.publicKey.isValidSignatureES256([UInt8](repeating: 1, count: count), for: [1, 2, 3]))
    }

    @Test("an all-zero signature is invalid")
    func zeroSignature() throws {
        let key = try P256PrivateKey.generate()
        #expect(!key.publicKey.isValidSignatureES256([UInt8](repeating: 0, count: 64), for: [1]))
    }

    @Test("a high-S signature (n - s) still verifies, as RFC 7518 allows")
    func highSVerifies() throws {
        let key = try P256PrivateKey.generate()
        let message = Array("malleable".utf8)
        let signature = try key.signatureES256(for: message)
        // n - s, big-endian subtraction
        let order: [UInt8] = Hex.decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")!
        var flipped = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in (0..<32).reversed() {
            var value = Int(order[index]) - Int(signature[32 + index]) - borrow
            borrow = value < 0 ? 1 : 0
            if value < 0 { value += 256 }
            flipped[index] = UInt8(value)
        }
        #expect(key.publicKey.isValidSignatureES256(Array(signature[0..<32]) + flipped, for: message))
    }

    @Test("PKCS#8 PEM round-trips to the same key")
    func pkcs8RoundTrip() throws {
        let key = try P256PrivateKey.generate()
        let pem = try key.pkcs8PEM()
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let loaded = try P256PrivateKey(pkcs8PEM: pem)
        #expect(loaded.publicKey.thumbprint == key.publicKey.thumbprint)
        let signature = try loaded.signatureES256(for: [1, 2, 3])
        #expect(key.publicKey.isValidSignatureES256(signature, for: [1, 2, 3]))
    }

    @Test("encrypted PKCS#8 round-trips with the passphrase")
    func encryptedRoundTrip() throws {
        let key = try P256PrivateKey.generate()
        let passphrase = Array("pass\u{0}phrase ✓".utf8)
        let pem = try key.pkcs8PEM(passphrase: passphrase)
        #expect(pem.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
        let loaded = try P256PrivateKey(pkcs8PEM: pem, passphrase: passphrase)
        #expect(loaded.publicKey.thumbprint == key.publicKey.thumbprint)
    }

    @Test("encrypted PKCS#8 with a wrong passphrase fails")
    func wrongPassphrase() throws {
        let pem = try P256PrivateKey.generate().pkcs8PEM(passphrase: Array("right".utf8))
        #expect(throws: P256KeyError.decryptionFailed) { try P256PrivateKey(pkcs8PEM: pem, passphrase: Array("wrong".utf8)) }
        // A passphrase that differs only after a NUL byte is a different passphrase.
        let nul = try P256PrivateKey.generate().pkcs8PEM(passphrase: [0x61, 0x00, 0x62])
        #expect(throws: P256KeyError.decryptionFailed) { try P256PrivateKey(pkcs8PEM: nul, passphrase: [0x61, 0x00, 0x63]) }
    }

    @Test("encrypted PKCS#8 without a passphrase fails, without prompting")
    func missingPassphrase() throws {
        let pem = try P256PrivateKey.generate().pkcs8PEM(passphrase: Array("right".utf8))
        #expect(throws: P256KeyError.passphraseRequired) { try P256PrivateKey(pkcs8PEM: pem) }
    }

    @Test("the encrypted PEM is readable by the openssl CLI with the passphrase")
    func encryptedPEMInteropsWithOpenSSL() throws {
        let key = try P256PrivateKey.generate()
        let dir = try TemporaryDirectory("tests").url
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("key.pem")
        try key.pkcs8PEM(passphrase: Array("s3cret".utf8)).write(to: file, atomically: true, encoding: .utf8)
        let result = try Tools.run(["openssl", "pkey", "-in", file.path, "-passin", "pass:s3cret", "-pubout"])
        try #require(result.status == 0, "\(result.stderr)")
        #expect(try P256PublicKey(spkiPEM: result.stdout).thumbprint == key.publicKey.thumbprint)
    }

    @Test("keys made by the openssl CLI load (PKCS#8 and SEC1)")
    func opensslGeneratedKeysLoad() throws {
        let pkcs8 = try Tools.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"])
        try #require(pkcs8.status == 0)
        _ = try P256PrivateKey(pkcs8PEM: pkcs8.stdout)
        let sec1 = try Tools.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout"])
        try #require(sec1.status == 0)
        _ = try P256PrivateKey(pkcs8PEM: sec1.stdout)
    }

    @Test("P-384 and RSA keys are refused", arguments: [
        ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"],
        ["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"],
        ["openssl", "genpkey", "-algorithm", "ED25519"],
    ])
    func otherKeysRefused(command: [String]) throws {
        let generated = try Tools.run(command)
        try #require(generated.status == 0)
        #expect(throws: P256KeyError.self) { try P256PrivateKey(pkcs8PEM: generated.stdout) }
        let publicPEM = try Tools.run(["openssl", "pkey", "-pubout"], stdin: generated.stdout)
        try #require(publicPEM.status == 0)
        #expect(throws: P256KeyError.self) { try P256PublicKey(spkiPEM: publicPEM.stdout) }
    }

    @Test("garbage is not a key")
    func garbage() {
        #expect(throws: P256KeyError.self) { try P256PrivateKey(pkcs8PEM: "hello") }
        #expect(throws: P256KeyError.self) { try P256PublicKey(spkiPEM: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n") }
    }

    @Test("SPKI PEM round-trips and agrees with openssl")
    func spkiRoundTrip() throws {
        let key = try P256PrivateKey.generate()
        let pem = key.publicKey.spkiPEM
        #expect(pem.hasPrefix("-----BEGIN PUBLIC KEY-----"))
        #expect(try P256PublicKey(spkiPEM: pem).thumbprint == key.publicKey.thumbprint)
        let viaCLI = try Tools.run(["openssl", "pkey", "-pubout"], stdin: try key.pkcs8PEM())
        #expect(viaCLI.stdout == pem)
    }

    @Test("JWK round-trips; x and y must be 32 bytes; the point must be on the curve")
    func jwkRoundTripAndChecks() throws {
        let key = try P256PrivateKey.generate().publicKey
        let jwk = key.jwk
        #expect(jwk.kty == "EC" && jwk.crv == "P-256" && jwk.alg == "ES256" && jwk.use == "sig")
        #expect(jwk.kid == key.thumbprint)
        #expect(try P256PublicKey(jwk: jwk).spkiPEM == key.spkiPEM)

        var short = jwk
        short.x = Base64URL.encode(key.x.dropFirst())
        #expect(throws: P256KeyError.self) { try P256PublicKey(jwk: short) }
        var offCurve = jwk
        var y = key.y
        y[31] ^= 1
        offCurve.y = Base64URL.encode(y)
        #expect(throws: P256KeyError.self) { try P256PublicKey(jwk: offCurve) }
        var rsa = jwk
        rsa.kty = "RSA"
        #expect(throws: P256KeyError.self) { try P256PublicKey(jwk: rsa) }
        var p384 = jwk
        p384.crv = "P-384"
        #expect(throws: P256KeyError.self) { try P256PublicKey(jwk: p384) }
    }

    @Test("signing from many tasks at once is safe")
    func concurrentSigning() async throws {
        let key = try P256PrivateKey.generate()
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let message = Array("message \(index)".utf8)
                    return key.publicKey.isValidSignatureES256(try key.signatureES256(for: message), for: message)
                }
            }
            for try await ok in group { #expect(ok) }
        }
    }
}
