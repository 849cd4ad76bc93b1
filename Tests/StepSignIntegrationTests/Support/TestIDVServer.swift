import Foundation
import StepSignClient
import StepSignCrypto
import Synchronization
import Testing
import StepSignTestSupport

/// A stand-in for the IDV server of SPEC §3.2 (`setIDVBiometricAssertion`): a real ES256 key
/// in a temporary directory that issues biometric assertions with any claims or header, and
/// publishes its public key as a PEM file and as a JWKS file.
final class TestIDVServer: @unchecked Sendable {
    static let issuer = "https://idv.test"
    static let maxAgeSeconds = 300

    let key: P256PrivateKey
    let directory: URL
    /// The `kid` the JWKS file names the key by (not its thumbprint, as a real IDV server may).
    let jwksKid = "idv-signing-2024"

    init() throws {
        key = try P256PrivateKey.generate()
        // Whoever can write these files can approve level-4 signatures: the daemon's strict
        // modes (SPEC §7) want them writable by their owner only, whatever the umask.
        directory = try TemporaryDirectory("idv", mode: 0o755).url
        try key.publicKey.spkiPEM.write(toFile: pemPath, atomically: true, encoding: .utf8)
        var jwk = key.publicKey.jwk
        jwk.kid = jwksKid
        let jwks = try JSONEncoder().encode(JWKS(keys: [jwk]))
        try jwks.write(to: URL(fileURLWithPath: jwksPath))
        for path in [pemPath, jwksPath] {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        }
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// The public key as a PEM bundle of one `PUBLIC KEY` block.
    var pemPath: String { directory.appendingPathComponent("idv.pem").path }
    /// The public key as a JWKS (with `kid` = `jwksKid`).
    var jwksPath: String { directory.appendingPathComponent("idv.jwks").path }

    enum KeysFormat: String, CustomStringConvertible, CaseIterable, Sendable {
        case pem, jwks
        var description: String { rawValue }
    }

    /// The `[idv]` table for a daemon that trusts this server.
    func config(_ format: KeysFormat = .pem, issuer: String = TestIDVServer.issuer) -> String {
        """
        [idv]
        issuer = "\(issuer)"
        trusted_keys = "\(format == .pem ? pemPath : jwksPath)"
        max_age_seconds = \(Self.maxAgeSeconds)
        """
    }

    /// The claims of a good assertion for `user` and `nonce`, issued now.
    static func goodClaims(user: String, nonce: String, now: Date = Date()) -> [String: Any] {
        let clock = Int(now.timeIntervalSince1970)
        return ["iss": issuer, "sub": user, "nonce": nonce, "iat": clock, "exp": clock + 120, "result": "match"]
    }

    /// A compact JWS over `claims` with `header` (default `{"alg":"ES256","typ":"JWT"}`),
    /// signed ES256 by `signer` (default: this server's key) whatever the header says.
    func assertion(claims: [String: Any], header: [String: Any] = ["alg": "ES256", "typ": "JWT"],
                   signer: P256PrivateKey? = nil) throws -> String {
        try JWS.signES256(headerJSON: Self.json(header), payload: Self.json(claims), key: signer ?? key)
    }

    /// Claims for `user` and `nonce` with no `txn` (not bound to any operation), with
    /// `changes` applied (`NSNull()` removes a claim). For assertions that must be refused.
    func assertion(user: String = DaemonHarness.user, nonce: String, changes: [String: Any] = [:],
                   header: [String: Any] = ["alg": "ES256", "typ": "JWT"], signer: P256PrivateKey? = nil) throws -> String {
        var claims = Self.goodClaims(user: user, nonce: nonce)
        for (name, value) in changes {
            if value is NSNull { claims[name] = nil } else { claims[name] = value }
        }
        return try assertion(claims: claims, header: header, signer: signer)
    }

    /// What a real IDV server does with a `getIDVBiometric` challenge (SPEC §3.1/§3.2, PSD2
    /// dynamic linking): decodes the operation text, shows it to the person (here: records it
    /// in `shown`), and after a biometric match asserts exactly that operation: `nonce` from
    /// the text, `sub` its user, and `txn` = base64url(SHA-256(the text's bytes)). `changes`
    /// are applied to the claims last.
    func assertion(for challenge: IDVChallenge, changes: [String: Any] = [:],
                   header: [String: Any] = ["alg": "ES256", "typ": "JWT"], signer: P256PrivateKey? = nil) throws -> String {
        let operation = try #require(IDVOperation(text: challenge.text), "not a stepsign-idv-v1 operation text")
        shown.withLock { $0.append(operation) }
        var claims = Self.goodClaims(user: operation.user, nonce: operation.nonce)
        claims["txn"] = IDVOperation.txn(of: challenge.text)
        for (name, value) in changes {
            if value is NSNull { claims[name] = nil } else { claims[name] = value }
        }
        return try assertion(claims: claims, header: header, signer: signer)
    }

    /// The operations this server has shown to a person, oldest first.
    let shown = Mutex<[IDVOperation]>([])

    /// An unsigned JWS: `alg: none`, empty signature part.
    static func unsecured(claims: [String: Any]) throws -> String {
        Base64URL.encode(try json(["alg": "none", "typ": "JWT"])) + "." + Base64URL.encode(try json(claims)) + "."
    }

    /// An HS256 JWS whose HMAC secret is `secret` (the algorithm-confusion attack: the
    /// verifier's own public key PEM used as a shared secret).
    static func hs256(claims: [String: Any], secret: [UInt8]) throws -> String {
        let input = Base64URL.encode(try json(["alg": "HS256", "typ": "JWT"])) + "." + Base64URL.encode(try json(claims))
        return input + "." + Base64URL.encode(hmacSHA256(key: secret, message: Array(input.utf8)))
    }

    static func json(_ object: [String: Any]) throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
    }

    /// HMAC-SHA-256 (RFC 2104) over StepSignCrypto's SHA-256.
    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var block = key.count > 64 ? SHA256.hash(key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        let inner = SHA256.hash(block.map { $0 ^ 0x36 } + message)
        return SHA256.hash(block.map { $0 ^ 0x5c } + inner)
    }
}

/// Re-shaping an ES256 JWS signature without the key.
enum SignatureMalleability {
    /// The order n of the P-256 group, big-endian.
    static let order: [UInt8] = Hex.decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")!

    /// (r, n − s): the other valid ECDSA signature of the same message.
    static func highSTwin(ofRaw raw: [UInt8]) -> [UInt8] {
        precondition(raw.count == 64)
        let s = Array(raw[32...])
        var result = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in stride(from: 31, through: 0, by: -1) {
            var digit = Int(order[index]) - Int(s[index]) - borrow
            borrow = digit < 0 ? 1 : 0
            if digit < 0 { digit += 256 }
            result[index] = UInt8(digit)
        }
        return Array(raw[..<32]) + result
    }

    /// `jws` with its signature replaced by the (r, n − s) twin.
    static func twin(of jws: String) -> String {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let raw = Base64URL.decode(parts[2])!
        return parts[0] + "." + parts[1] + "." + Base64URL.encode(highSTwin(ofRaw: raw))
    }
}

extension StepSignConnection {
    /// `authenticateUserAndSignData` (4,1) for a session that is not logged in.
    func requestIDV(user: String = DaemonHarness.user, payload: String = "wire 5000 EUR to carol",
                    reason: String = "high-value transfer") throws -> ClientReply {
        try call("authenticateUserAndSignData", [
            "user": user, "payload": payload, "reason": reason, "authLevel": 4, "authenticatorType": 1,
        ])
    }

    /// `setIDVBiometricAssertion`.
    func setIDVAssertion(_ assertion: String) throws -> ClientReply {
        try call("setIDVBiometricAssertion", ["assertion": assertion])
    }
}

extension ClientReply {
    /// `nonce` of `getIDVBiometric`.
    var idvNonce: String? { string("nonce", of: "getIDVBiometric") }

    /// `nonce` and the decoded `challenge` of `getIDVBiometric`.
    var idvChallenge: IDVChallenge? {
        guard let nonce = idvNonce, let encoded = string("challenge", of: "getIDVBiometric"),
              let text = Base64URL.decode(encoded) else { return nil }
        return IDVChallenge(nonce: nonce, text: text)
    }
}

/// A `getIDVBiometric` challenge as the client forwards it to the IDV server.
struct IDVChallenge: Sendable {
    var nonce: String
    /// The operation text (the `challenge` field, base64url-decoded).
    var text: [UInt8]
}

/// The operation text of an IDV challenge (SPEC §3.1): `stepsign-idv-v1`, nonce, user,
/// SHA-256 of the payload (hex), reason, requesting process name, pid and uid, one per line.
struct IDVOperation: Sendable, Equatable {
    static let version = "stepsign-idv-v1"

    var nonce: String
    var user: String
    var payloadSHA256: String
    var reason: String
    var comm: String
    var pid: Int32
    var uid: UInt32

    init(nonce: String, user: String, payload: String, reason: String, comm: String, pid: Int32, uid: UInt32) {
        self.nonce = nonce
        self.user = user
        self.payloadSHA256 = Hex.encode(SHA256.hash(Array(payload.utf8)))
        self.reason = reason
        self.comm = comm
        self.pid = pid
        self.uid = uid
    }

    /// Parses the text; nil unless it has the eight lines of `stepsign-idv-v1`.
    init?(text: [UInt8]) {
        let lines = String(decoding: text, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count == 8, lines[0] == Self.version, let pid = Int32(lines[6]), let uid = UInt32(lines[7]) else { return nil }
        nonce = lines[1]
        user = lines[2]
        payloadSHA256 = lines[3]
        reason = lines[4]
        comm = lines[5]
        self.pid = pid
        self.uid = uid
    }

    /// The operation text.
    var text: [UInt8] {
        Array([Self.version, nonce, user, payloadSHA256, reason, comm, String(pid), String(uid)].joined(separator: "\n").utf8)
    }

    /// The operation this test process asks for: its own process name, pid and uid.
    static func ofThisProcess(nonce: String, user: String = DaemonHarness.user, payload: String, reason: String) -> IDVOperation {
        let comm = (try? String(contentsOfFile: "/proc/self/comm", encoding: .utf8))?
            .trimmingCharacters(in: .newlines) ?? ""
        return IDVOperation(nonce: nonce, user: user, payload: payload, reason: reason, comm: comm, pid: getpid(), uid: getuid())
    }

    /// `txn` for an operation text: base64url(SHA-256(text)).
    static func txn(of text: [UInt8]) -> String { Base64URL.encode(SHA256.hash(text)) }
}
