import Foundation
import StepSignTestSupport
import StepSignCrypto
import Testing

/// Cross-checks against PyJWT/cryptography and the openssl CLI.
@Suite("Interop with PyJWT, cryptography and openssl")
struct InteropTests {
    @Test("a JWS made here verifies with PyJWT (ES256)")
    func swiftJWSVerifiesWithPyJWT() throws {
        let key = try P256PrivateKey.generate()
        let header = #"{"alg":"ES256","kid":"\#(key.publicKey.thumbprint)","typ":"JWT"}"#
        let compact = try JWS.signES256(headerJSON: Array(header.utf8), payload: Array(#"{"sub":"alice","n":1}"#.utf8), key: key)
        let script = """
            import sys, jwt
            claims = jwt.decode(sys.argv[1], sys.argv[2], algorithms=["ES256"])
            assert claims == {"sub": "alice", "n": 1}, claims
            assert jwt.get_unverified_header(sys.argv[1])["kid"] == sys.argv[3]
            print("ok")
            """
        let result = try Tools.python(script, compact, key.publicKey.spkiPEM, key.publicKey.thumbprint)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "ok\n")
    }

    @Test("a signature made here verifies with openssl dgst after raw → DER")
    func swiftSignatureVerifiesWithOpenSSL() throws {
        let key = try P256PrivateKey.generate()
        let message = Array("signed with stepsign".utf8)
        let der = try ECDSASignature.derFromRaw(try key.signatureES256(for: message))
        let dir = try TemporaryDirectory("tests").url
        defer { try? FileManager.default.removeItem(at: dir) }
        let pub = dir.appendingPathComponent("pub.pem"), sig = dir.appendingPathComponent("sig.der"), msg = dir.appendingPathComponent("msg")
        try key.publicKey.spkiPEM.write(to: pub, atomically: true, encoding: .utf8)
        try Data(der).write(to: sig)
        try Data(message).write(to: msg)
        let result = try Tools.run(["openssl", "dgst", "-sha256", "-verify", pub.path, "-signature", sig.path, msg.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Verified OK"))
    }

    @Test("a signature made by openssl dgst verifies here after DER → raw")
    func openSSLSignatureVerifiesHere() throws {
        let key = try P256PrivateKey.generate()
        let dir = try TemporaryDirectory("tests").url
        defer { try? FileManager.default.removeItem(at: dir) }
        let priv = dir.appendingPathComponent("key.pem"), msg = dir.appendingPathComponent("msg")
        try key.pkcs8PEM().write(to: priv, atomically: true, encoding: .utf8)
        try Data("from openssl".utf8).write(to: msg)
        let sig = dir.appendingPathComponent("sig.der")
        let result = try Tools.run(["openssl", "dgst", "-sha256", "-sign", priv.path, "-out", sig.path, msg.path])
        try #require(result.status == 0, "\(result.stderr)")
        let raw = try ECDSASignature.rawFromDER(Array(try Data(contentsOf: sig)))
        #expect(key.publicKey.isValidSignatureES256(raw, for: Array("from openssl".utf8)))
    }

    @Test("a JWS made by PyJWT with a key given to Swift as PEM verifies here")
    func pyJWTVerifiesHere() throws {
        let script = """
            import jwt
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.hazmat.primitives import serialization as s
            k = ec.generate_private_key(ec.SECP256R1())
            print(k.private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, s.NoEncryption()).decode(), end="")
            print(k.public_key().public_bytes(s.Encoding.PEM, s.PublicFormat.SubjectPublicKeyInfo).decode(), end="")
            print(jwt.encode({"sub": "bob"}, k, algorithm="ES256", headers={"kid": "py"}))
            """
        let result = try Tools.python(script)
        try #require(result.status == 0, "\(result.stderr)")
        let privateEnd = try #require(result.stdout.firstRange(of: "-----END PRIVATE KEY-----\n"))
        let publicEnd = try #require(result.stdout.firstRange(of: "-----END PUBLIC KEY-----\n"))
        let privatePEM = String(result.stdout[..<privateEnd.upperBound])
        let publicPEM = String(result.stdout[privateEnd.upperBound..<publicEnd.upperBound])
        let token = result.stdout[publicEnd.upperBound...].trimmingCharacters(in: .whitespacesAndNewlines)

        let publicKey = try P256PublicKey(spkiPEM: publicPEM)
        let jws = try JWS.parse(token)
        #expect(jws.header.kid == "py")
        #expect(jws.isValidES256(key: publicKey))
        #expect(try P256PrivateKey(pkcs8PEM: privatePEM).publicKey.thumbprint == publicKey.thumbprint)
    }

    @Test("the thumbprint is SHA-256 over {crv,kty,x,y} in that order, as Python computes it from the PEM")
    func thumbprintMatchesPython() throws {
        let key = try P256PrivateKey.generate().publicKey
        let script = """
            import sys, json, hashlib, base64
            from cryptography.hazmat.primitives import serialization as s
            n = s.load_pem_public_key(sys.argv[1].encode()).public_numbers()
            b = lambda x: base64.urlsafe_b64encode(x).rstrip(b"=").decode()
            jwk = {"kty": "EC", "crv": "P-256", "x": b(n.x.to_bytes(32, "big")), "y": b(n.y.to_bytes(32, "big"))}
            canonical = json.dumps(jwk, sort_keys=True, separators=(",", ":"))
            assert canonical.startswith('{"crv":"P-256","kty":"EC","x":')
            print(b(hashlib.sha256(canonical.encode()).digest()), jwk["x"], jwk["y"])
            """
        let result = try Tools.python(script, key.spkiPEM)
        try #require(result.status == 0, "\(result.stderr)")
        let fields = result.stdout.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(fields == [key.thumbprint, key.jwk.x!, key.jwk.y!])
    }

    @Test("the thumbprint of a fixed key is stable (RFC 7515 A.3 key)")
    func thumbprintKnownAnswer() throws {
        let key = try P256PublicKey(jwk: JWSTests.rfcJWK)
        let script = """
            import json, hashlib, base64
            c = json.dumps({"crv":"P-256","kty":"EC","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}, separators=(",",":"))
            print(base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b"=").decode())
            """
        let result = try Tools.python(script)
        try #require(result.status == 0, "\(result.stderr)")
        #expect(key.thumbprint == result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
