import Foundation
import StepSignProtocol
import StepSignClient
import StepSignCrypto
import StepSignFormat
import StepSignTestSupport
import Testing

/// `stepsign-verify` says "valid" only for what stepsign itself would make (SPEC §2, §5.3,
/// §8): the forgeries below are signed with the daemon's own key file, the way someone who
/// stole it, or a buggy second signer, would make them; the verifier runs as a subprocess.
@Suite("stepsign-verify strictness", .blocking)
struct VerifierStrictnessTests {
    /// A daemon with one level-0 signature, its JWKS in a file and its private key read from
    /// the state directory's `keys/`.
    struct Setup {
        let daemon: DaemonHarness
        let jws: String
        let jwksPath: String
        let key: P256PrivateKey
        let kid: String

        func verify(_ arguments: [String]) throws -> Tools.Result {
            try Tools.run([Binaries.path("stepsign-verify"), "--keys", jwksPath] + arguments)
        }

        /// A JWS with exactly these header and claims bytes, signed (low-S) by the daemon's key.
        func forge(header: String, claims: String) throws -> String {
            try JWS.signES256(headerJSON: Array(header.utf8), payload: Array(claims.utf8), key: key)
        }
    }

    func setup(level: Int = 0) throws -> Setup {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        let reply: ClientReply
        if level == 0 {
            reply = try connection.call("authenticateUserAndSignData", [
                "user": "ceo", "payload": "Pay 1,000,000 EUR to mallory", "reason": "r", "authLevel": 0, "authenticatorType": 0,
            ])
        } else {
            try daemon.addUser()
            reply = try connection.signWithPassword(user: DaemonHarness.user, password: DaemonHarness.password)
        }
        let details = try #require(reply.event("onAuthenticateUserAndSignData")?["details"])
        let jws = try #require(details["payloadSignature"]?.stringValue)
        let jwks = Data(try #require(try connection.call("getPublicKeys").result?["jwks"]).jsonBytes)
        let jwksPath = daemon.directory.appendingPathComponent("jwks.json").path
        try jwks.write(to: URL(fileURLWithPath: jwksPath))
        let keysDirectory = daemon.stateDirectory + "/keys"
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: keysDirectory).first { $0.hasSuffix(".pem") })
        let key = try P256PrivateKey(pkcs8PEM: try String(contentsOfFile: keysDirectory + "/" + file, encoding: .utf8))
        return Setup(daemon: daemon, jws: jws, jwksPath: jwksPath, key: key, kid: key.publicKey.thumbprint)
    }

    func parts(_ jws: String) throws -> (header: String, claims: String) {
        let parsed = try JWS.parse(jws)
        return (String(decoding: parsed.headerJSON, as: UTF8.self), String(decoding: parsed.payload, as: UTF8.self))
    }

    @Test("a level-0 signature (nobody authenticated) exits 1 unless --min-level 0 is given")
    func levelZeroNeedsMinLevelZero() throws {
        let setup = try setup(level: 0)
        let plain = try setup.verify(["--user", "ceo", "--payload", "Pay 1,000,000 EUR to mallory", setup.jws])
        #expect(plain.status == 1, "\(plain.stdout)\(plain.stderr)")
        #expect(plain.stdout.contains("level 0"))
        let json = try setup.verify(["--json", setup.jws])
        #expect(json.stdout.contains(#""reason":"level-too-low""#))
        #expect(try setup.verify(["--min-level", "0", "--user", "ceo", setup.jws]).status == 0)
    }

    @Test("a level-1 signature verifies by default and fails --min-level 4")
    func levelOneDefault() throws {
        let setup = try setup(level: 1)
        #expect(try setup.verify([setup.jws]).status == 0)
        #expect(try setup.verify(["--min-level", "4", setup.jws]).status == 1)
    }

    @Test("claims carry peer {uid, pid, comm} of the process that asked, as the ledger row does")
    func claimsCarryPeer() throws {
        let setup = try setup(level: 0)
        let claims = try StepSignSignature.verify(setup.jws, trustedKeys: try TrustedKeys(parsing: String(contentsOfFile: setup.jwksPath, encoding: .utf8)))
        let peer = try #require(claims.peer)
        #expect(peer.uid == getuid())
        #expect(peer.pid == getpid())
        let row = try setup.daemon.connect().call("getSignature", ["signatureID": claims.jti])
        let rowPeer = try #require(row.result?["peer"])
        #expect(rowPeer["uid"]?.int == Int(peer.uid))
        #expect(rowPeer["pid"]?.int == Int(peer.pid))
        #expect(rowPeer["comm"]?.stringValue == peer.comm)
    }

    @Test("claims with payload or sub twice, signed with the daemon's key, exit 1 (PyJWT would read the last)",
          arguments: ["payload", "sub"])
    func duplicateClaimRefused(member: String) throws {
        let setup = try setup(level: 0)
        let (header, claims) = try parts(setup.jws)
        let forgedValue = member == "payload" ? "Pay 1 EUR to bob" : "alice"
        let doubled = String(claims.dropLast()) + #","\#(member)":"\#(forgedValue)"}"#
        let forged = try setup.forge(header: header, claims: doubled)
        let result = try setup.verify(["--min-level", "0", "--json", forged])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains(#""reason":"duplicate-member""#))
        // The same bytes without the duplicate verify: it is the duplicate that is refused.
        #expect(try setup.verify(["--min-level", "0", try setup.forge(header: header, claims: claims)]).status == 0)
    }

    @Test("a header with kid or typ twice, signed with the daemon's key, exits 1")
    func duplicateHeaderRefused() throws {
        let setup = try setup(level: 0)
        let (_, claims) = try parts(setup.jws)
        let header = #"{"alg":"ES256","kid":"\#(setup.kid)","typ":"stepsign+jwt","typ":"stepsign+jwt"}"#
        let result = try setup.verify(["--min-level", "0", "--json", try setup.forge(header: header, claims: claims)])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains(#""reason":"duplicate-member""#))
    }

    @Test("the daemon signs low-S, and the high-S twin of its signature exits 1")
    func highSTwinRefused() throws {
        let setup = try setup(level: 0)
        let pieces = setup.jws.split(separator: ".").map(String.init)
        let raw = try #require(Base64URL.decode(pieces[2]))
        #expect(ECDSALowS.isLowS(raw))
        let twin = ECDSALowS.twin(raw)
        let twinJWS = pieces[0] + "." + pieces[1] + "." + Base64URL.encode(twin)
        // The twin is a mathematically valid ECDSA signature: only the low-S rule refuses it.
        let parsed = try JWS.parse(twinJWS)
        #expect(parsed.isValidES256(key: setup.key.publicKey))
        let result = try setup.verify(["--min-level", "0", "--json", twinJWS])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains(#""reason":"high-s""#))
        #expect(try setup.verify(["--min-level", "0", setup.jws]).status == 0)
    }
}
