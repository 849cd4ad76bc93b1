import Foundation
import StepSignTestSupport
import StepSignCrypto
import StepSignFormat
import Testing

/// The `stepsign-verify` binary (SPEC §8): exit 0 valid, 1 invalid or mismatched, 2 bad input.
@Suite("stepsign-verify CLI")
final class StepSignVerifyCLITests: Sendable {
    let dir: URL
    let key: P256PrivateKey
    let keysPEM: URL
    let keysJWKS: URL
    let claims = SignatureClaimsTests.claims()

    init() throws {
        dir = try TemporaryDirectory("tests").url
        key = try P256PrivateKey.generate()
        let trusted = TrustedKeys(keys: [key.publicKey])
        keysPEM = dir.appendingPathComponent("keys.pem")
        try trusted.pemBundle.write(to: keysPEM, atomically: true, encoding: .utf8)
        keysJWKS = dir.appendingPathComponent("keys.json")
        try JSONEncoder().encode(trusted.jwks).write(to: keysJWKS)
    }

    deinit {
        try? FileManager.default.removeItem(at: dir)
    }

    var kid: String { key.publicKey.thumbprint }

    func signed(_ claims: SignatureClaims? = nil) throws -> String {
        try StepSignSignature.make(claims: claims ?? self.claims, key: key, kid: kid)
    }

    func verify(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> Tools.Result {
        try Tools.run([try Binaries.stepsignVerify().path] + arguments, stdin: stdin, environment: environment)
    }

    @Test("a valid signature exits 0 with a PEM bundle or a JWKS as keys", arguments: [false, true])
    func validExitsZero(jwks: Bool) throws {
        let result = try verify(["--keys", (jwks ? keysJWKS : keysPEM).path, try signed()])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("valid:"))
    }

    @Test("the JWS can come from stdin, with - or without an argument")
    func readsStdin() throws {
        let jws = try signed() + "\n"
        #expect(try verify(["--keys", keysPEM.path, "-"], stdin: jws).status == 0)
        #expect(try verify(["--keys", keysPEM.path], stdin: jws).status == 0)
    }

    @Test("$STEPSIGN_KEYS names the keys file when --keys is absent")
    func keysFromEnvironment() throws {
        #expect(try verify([try signed()], environment: ["STEPSIGN_KEYS": keysPEM.path]).status == 0)
    }

    @Test("--json prints one object with valid, kid and the claims")
    func jsonOutput() throws {
        let result = try verify(["--keys", keysPEM.path, "--json", try signed()])
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["valid"] as? Bool == true)
        #expect(object["kid"] as? String == kid)
        #expect((object["claims"] as? [String: Any])?["sub"] as? String == "alice")
    }

    @Test("--payload and --user that match exit 0; that differ exit 1")
    func payloadAndUser() throws {
        let jws = try signed()
        #expect(try verify(["--keys", keysPEM.path, "--payload", claims.payload, "--user", "alice", jws]).status == 0)
        let wrongPayload = try verify(["--keys", keysPEM.path, "--payload", "pay 100 EUR to Bob ", "--json", jws])
        #expect(wrongPayload.status == 1)
        #expect(wrongPayload.stdout.contains(#""reason":"payload-mismatch""#))
        #expect(try verify(["--keys", keysPEM.path, "--user", "bob", jws]).status == 1)
    }

    @Test("--payload-file compares the file's bytes exactly")
    func payloadFile() throws {
        let file = dir.appendingPathComponent("payload.txt")
        try Data(claims.payload.utf8).write(to: file)
        #expect(try verify(["--keys", keysPEM.path, "--payload-file", file.path, try signed()]).status == 0)
        try Data((claims.payload + "\n").utf8).write(to: file)
        #expect(try verify(["--keys", keysPEM.path, "--payload-file", file.path, try signed()]).status == 1)
    }

    @Test("a canonically equivalent but differently encoded payload is a mismatch")
    func payloadComparedByBytes() throws {
        let jws = try signed(SignatureClaimsTests.claims(payload: "caf\u{e9}"))
        #expect(try verify(["--keys", keysPEM.path, "--payload", "cafe\u{301}", jws]).status == 1)
    }

    @Test("a tampered payload exits 1")
    func tamperedExitsOne() throws {
        let forged = Forgery.replacingPayload(of: try signed(), with: SignatureClaimsTests.claims(payload: "pay 999 EUR"))
        #expect(try verify(["--keys", keysPEM.path, forged]).status == 1)
    }

    @Test("alg none exits 1")
    func algNoneExitsOne() throws {
        let forged = Forgery.unsigned(header: #"{"alg":"none","kid":"\#(kid)","typ":"stepsign+jwt"}"#, claims: claims)
        let result = try verify(["--keys", keysPEM.path, "--json", forged])
        #expect(result.status == 1)
        #expect(result.stdout.contains(#""reason":"alg-not-allowed""#))
    }

    @Test("HS256 with the public key as the secret exits 1")
    func hs256ExitsOne() throws {
        let forged = try Forgery.hs256(kid: kid, claims: claims, secret: key.publicKey.spkiPEM)
        #expect(try verify(["--keys", keysPEM.path, forged]).status == 1)
    }

    @Test("an unknown kid exits 1")
    func unknownKidExitsOne() throws {
        let other = try P256PrivateKey.generate()
        let jws = try StepSignSignature.make(claims: claims, key: other, kid: other.publicKey.thumbprint)
        #expect(try verify(["--keys", keysPEM.path, jws]).status == 1)
    }

    @Test("garbage, a missing keys file, a bad keys file and bad usage exit 2")
    func badInputExitsTwo() throws {
        let garbage = try verify(["--keys", keysPEM.path, "garbage"])
        #expect(garbage.status == 2)
        #expect(garbage.stdout.isEmpty && !garbage.stderr.isEmpty)
        #expect(try verify(["--keys", dir.appendingPathComponent("missing").path, try signed()]).status == 2)
        let badKeys = dir.appendingPathComponent("bad.pem")
        try "not keys".write(to: badKeys, atomically: true, encoding: .utf8)
        #expect(try verify(["--keys", badKeys.path, try signed()]).status == 2)
        #expect(try verify([try signed()], environment: ["STEPSIGN_KEYS": ""]).status == 2)
        #expect(try verify(["--keys", keysPEM.path, "--bogus", try signed()]).status == 2)
        #expect(try verify(["--keys", keysPEM.path, "--payload", "a", "--payload-file", "b", try signed()]).status == 2)
        #expect(try verify(["--keys", keysPEM.path], stdin: "").status == 2)
    }

    @Test("a stepsign JWS made by PyJWT, kid computed in Python, exits 0; with a changed claim exits 1")
    func pyJWTMadeSignature() throws {
        let script = """
            import sys, json, hashlib, base64, jwt
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.hazmat.primitives import serialization as s
            k = ec.generate_private_key(ec.SECP256R1())
            n = k.public_key().public_numbers()
            b = lambda x: base64.urlsafe_b64encode(x).rstrip(b"=").decode()
            c = json.dumps({"crv": "P-256", "kty": "EC", "x": b(n.x.to_bytes(32, "big")), "y": b(n.y.to_bytes(32, "big"))}, separators=(",", ":"))
            kid = b(hashlib.sha256(c.encode()).digest())
            open(sys.argv[1], "w").write(k.public_key().public_bytes(s.Encoding.PEM, s.PublicFormat.SubjectPublicKeyInfo).decode())
            claims = json.loads(sys.argv[2])
            def low_s(t):  # stepsign-verify accepts only low-S; cryptography makes either form
                return int.from_bytes(base64.urlsafe_b64decode(t.split(".")[2] + "=="), "big") & (2**256 - 1) <= 0x7FFFFFFF800000007FFFFFFFFFFFFFFFDE737D56D38BCF4279DCE5617E3192A8
            t = jwt.encode(claims, k, algorithm="ES256", headers={"kid": kid, "typ": "stepsign+jwt"})
            while not low_s(t):
                t = jwt.encode(claims, k, algorithm="ES256", headers={"kid": kid, "typ": "stepsign+jwt"})
            print(t)
            claims["sub"] = "mallory"
            print(jwt.encode(claims, ec.generate_private_key(ec.SECP256R1()), algorithm="ES256", headers={"kid": kid, "typ": "stepsign+jwt"}))
            """
        let pyKeys = dir.appendingPathComponent("py.pem")
        let made = try Tools.python(script, pyKeys.path, String(decoding: claims.jsonBytes, as: UTF8.self))
        try #require(made.status == 0, "\(made.stderr)")
        let tokens = made.stdout.split(separator: "\n").map(String.init)
        try #require(tokens.count == 2)
        let good = try verify(["--keys", pyKeys.path, "--user", "alice", tokens[0]])
        #expect(good.status == 0, "\(good.stdout) \(good.stderr)")
        #expect(try verify(["--keys", pyKeys.path, tokens[1]]).status == 1)
    }

    // MARK: ledger

    func ledger(count: Int) throws -> [LedgerExportEntry] {
        var previous = LedgerChain.genesisHash
        return try (1...count).map { seq in
            var claims = self.claims
            claims.jti = try UUIDv7.generate(unixMilliseconds: 1_700_000_000_000 + UInt64(seq))
            let jws = try signed(claims)
            let hash = LedgerChain.entryHash(previous: previous, jws: jws)
            defer { previous = hash }
            return LedgerExportEntry(LedgerLink(seq: Int64(seq), signatureID: claims.jti, payloadSignature: jws, prevHash: previous, entryHash: hash))
        }
    }

    func write(_ entries: [LedgerExportEntry]) throws -> URL {
        let file = dir.appendingPathComponent("ledger-\(UUID().uuidString).jsonl")
        let encoder = JSONEncoder()
        let lines = try entries.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test("an intact ledger exits 0 and counts its entries")
    func intactLedger() throws {
        let result = try verify(["ledger", try write(ledger(count: 4)).path, "--keys", keysPEM.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("4 entries"))
    }

    @Test("a changed JWS, a removed entry and a reordering each exit 1 naming the first bad seq")
    func brokenLedger() throws {
        let entries = try ledger(count: 4)
        var changed = entries
        changed[2].payloadSignature = try signed()
        var removed = entries
        removed.remove(at: 1)
        var reordered = entries
        reordered.swapAt(2, 3)
        for (broken, seq) in [(changed, 3), (removed, 2), (reordered, 3)] {
            let result = try verify(["ledger", try write(broken).path, "--keys", keysPEM.path, "--json"])
            #expect(result.status == 1)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            #expect(object["ok"] as? Bool == false)
            #expect(object["firstBadSeq"] as? Int == seq)
        }
    }

    @Test("a ledger entry signed by an untrusted key exits 1 even if the chain is consistent")
    func untrustedEntry() throws {
        var entries = try ledger(count: 3)
        let other = try P256PrivateKey.generate()
        let jws = try StepSignSignature.make(claims: claims, key: other, kid: kid)
        entries[1].payloadSignature = jws
        entries[1].entryHash = Hex.encode(LedgerChain.entryHash(previous: Hex.decode(entries[1].prevHash)!, jws: jws))
        entries[2].prevHash = entries[1].entryHash
        entries[2].entryHash = Hex.encode(LedgerChain.entryHash(previous: Hex.decode(entries[2].prevHash)!, jws: entries[2].payloadSignature))
        let result = try verify(["ledger", try write(entries).path, "--keys", keysPEM.path])
        #expect(result.status == 1)
        #expect(result.stdout.contains("first bad seq 2"))
    }

    @Test("an unreadable ledger or a line that is not an entry exits 2")
    func badLedgerInput() throws {
        #expect(try verify(["ledger", dir.appendingPathComponent("missing").path, "--keys", keysPEM.path]).status == 2)
        let file = dir.appendingPathComponent("bad.jsonl")
        try "{\"seq\":1}\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(try verify(["ledger", file.path, "--keys", keysPEM.path]).status == 2)
    }

    // MARK: bounded input

    /// A file of `size` bytes of "a", with no newline.
    func bigFile(_ size: Int) throws -> URL {
        let file = dir.appendingPathComponent("big-\(UUID().uuidString)")
        try Data(repeating: UInt8(ascii: "a"), count: size).write(to: file)
        return file
    }

    @Test("a JWS, keys, payload or checkpoint file over 1 MiB exits 2 saying so (read no further than the limit)")
    func oversizedFiles() throws {
        let big = try bigFile(2 << 20)
        let jws = try signed()
        let cases: [[String]] = [
            ["--keys", keysPEM.path, "@" + big.path],
            ["--keys", big.path, jws],
            ["--keys", keysPEM.path, "--payload-file", big.path, jws],
            ["ledger", try write(ledger(count: 2)).path, "--keys", keysPEM.path, "--checkpoint", big.path],
        ]
        for arguments in cases {
            let result = try verify(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stdout) \(result.stderr)")
            #expect(result.stderr.contains("\(big.path) is larger than 1 MiB; refused"), "\(arguments): \(result.stderr)")
        }
        // Exactly 1 MiB is not refused as too large (the JWS in it is then malformed).
        let limit = try verify(["--keys", keysPEM.path, "@" + (try bigFile(1 << 20)).path])
        #expect(limit.status == 2)
        #expect(!limit.stderr.contains("larger than"), "\(limit.stderr)")
    }

    @Test("a ledger line over 2 MiB exits 2 naming its line number, from a file and from stdin")
    func oversizedLedgerLine() throws {
        let file = try write(ledger(count: 2))
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: UInt8(ascii: "a"), count: 3 << 20) + Data("\n".utf8))
        try handle.close()
        let fromFile = try verify(["ledger", file.path, "--keys", keysPEM.path])
        #expect(fromFile.status == 2, "\(fromFile.stdout) \(fromFile.stderr)")
        #expect(fromFile.stderr.contains("\(file.path) line 3 is longer than 2 MiB; refused"), "\(fromFile.stderr)")
        let fromStdin = try verify(["ledger", "-", "--keys", keysPEM.path], stdin: try String(contentsOf: file, encoding: .utf8))
        #expect(fromStdin.status == 2, "\(fromStdin.stdout) \(fromStdin.stderr)")
        #expect(fromStdin.stderr.contains("stdin line 3 is longer than 2 MiB; refused"), "\(fromStdin.stderr)")
    }

    @Test("a ledger of more than 1 MiB still verifies, from a file and from stdin: only its lines are bounded")
    func largeLedgerVerifies() throws {
        let file = try write(ledger(count: 2000))
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int)
        try #require(size > 1 << 20, "the ledger is only \(size) bytes")
        let arguments = ["--keys", keysPEM.path, "--checkpoint-entries", "0"]
        let fromFile = try verify(["ledger", file.path] + arguments)
        #expect(fromFile.status == 0, "\(fromFile.stdout) \(fromFile.stderr)")
        #expect(fromFile.stdout.contains("2000 entries"))
        let fromStdin = try verify(["ledger", "-"] + arguments, stdin: try String(contentsOf: file, encoding: .utf8))
        #expect(fromStdin.status == 0, "\(fromStdin.stdout) \(fromStdin.stderr)")
        #expect(fromStdin.stdout.contains("2000 entries"))
    }
}
