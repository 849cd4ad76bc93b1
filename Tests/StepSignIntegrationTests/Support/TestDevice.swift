import Foundation
import StepSignProtocol
import StepSignClient
import StepSignCrypto
import Testing

/// An LDA device: a P-256 key that reads a `getLDASignature` challenge and signs it
/// (SPEC §3.2 `setLDASignature`, docs/flows.md "Device keys (LDA)").
struct TestDevice {
    let key: P256PrivateKey

    init() throws {
        key = try P256PrivateKey.generate()
    }

    /// The RFC 7638 thumbprint: the `deviceKeyId` the daemon must give this key.
    var kid: String { key.publicKey.thumbprint }

    /// The public key as SPKI PEM text.
    var pem: String { key.publicKey.spkiPEM }

    /// The public JWK as a JSON object (for `publicKey` given as an object).
    var jwkObject: JSONValue {
        let data = try! JSONEncoder().encode(key.publicKey.jwk)
        return try! JSONParser.parse(Array(data))
    }

    /// The public JWK as JSON text (for `publicKey` given as a string).
    var jwkString: String {
        String(decoding: try! JSONEncoder().encode(key.publicKey.jwk), as: UTF8.self)
    }

    /// base64url of the raw r||s ES256 signature over `bytes`.
    func sign(_ bytes: [UInt8]) throws -> String {
        Base64URL.encode(try key.signatureES256(for: bytes))
    }

    /// Signs the decoded bytes of a `challenge` field exactly as received.
    func sign(challenge: String) throws -> String {
        let bytes = try #require(Base64URL.decode(challenge), "challenge is not strict base64url: \(challenge)")
        return try sign(bytes)
    }

    /// The `setLDASignature` parameters that answer the `getLDASignature` of `reply`.
    func answer(_ reply: ClientReply, sourceLocation: SourceLocation = #_sourceLocation) throws -> [(String, JSONValue)] {
        let challenge = try #require(reply.string("challenge", of: "getLDASignature"),
                                     "no getLDASignature challenge in \(reply.shape)", sourceLocation: sourceLocation)
        return [("deviceKeyId", .string(kid)), ("signature", .string(try sign(challenge: challenge)))]
    }
}

/// The decoded text of a `getLDASignature` challenge: eight lines joined by `\n`.
struct LDAChallengeText: Equatable, CustomStringConvertible {
    var lines: [String]

    static let version = "stepsign-lda-v2"

    /// Decodes the base64url `challenge` of an event; nil if it is not base64url UTF-8.
    init?(challenge: String) {
        guard let bytes = Base64URL.decode(challenge), let text = String(bytes: bytes, encoding: .utf8) else { return nil }
        lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// The challenge of `reply`'s `getLDASignature`.
    init(_ reply: ClientReply, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let challenge = try #require(reply.string("challenge", of: "getLDASignature"),
                                     "no getLDASignature challenge in \(reply.shape)", sourceLocation: sourceLocation)
        self = try #require(LDAChallengeText(challenge: challenge), sourceLocation: sourceLocation)
    }

    init(lines: [String]) {
        self.lines = lines
    }

    /// What the daemon should build for this request (nonce taken from `nonce`).
    static func expected(nonce: String, user: String, payload: String, reason: String,
                         comm: String = ProcessIdentity.comm, pid: Int32 = getpid(),
                         uid: UInt32 = getuid()) -> LDAChallengeText {
        LDAChallengeText(lines: [version, nonce, user, Hex.encode(SHA256.hash(Array(payload.utf8))), reason, comm,
                                 String(pid), String(uid)])
    }

    var nonce: String { lines.count > 1 ? lines[1] : "" }

    /// The bytes a device signs.
    var bytes: [UInt8] { Array(lines.joined(separator: "\n").utf8) }

    /// The same text with line `index` replaced.
    func replacing(line index: Int, with value: String) -> LDAChallengeText {
        var copy = self
        copy.lines[index] = value
        return copy
    }

    var description: String { lines.joined(separator: "⏎") }
}

/// Who the daemon sees as the requesting process: this test runner.
enum ProcessIdentity {
    /// `/proc/self/comm` without its newline.
    static var comm: String {
        let text = (try? String(contentsOfFile: "/proc/self/comm", encoding: .utf8)) ?? ""
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }
}

extension StepSignConnection {
    /// `enrollDeviceKey` with the device's PEM; returns the reply.
    func enrollDevice(_ device: TestDevice, label: String = "phone") throws -> ClientReply {
        try call("enrollDeviceKey", ["publicKey": device.pem, "label": label])
    }

    /// `admin.enrollDeviceKey` for `user`, requiring success; returns the kid.
    @discardableResult
    func adminEnroll(_ device: TestDevice, user: String = DaemonHarness.user, label: String = "phone",
                     sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let reply = try call("admin.enrollDeviceKey", ["user": user, "publicKey": device.pem, "label": label])
        try #require(reply.code == 0, "admin.enrollDeviceKey: \(reply.code) \(reply.message)", sourceLocation: sourceLocation)
        return try #require(reply.result?["deviceKeyId"]?.stringValue, sourceLocation: sourceLocation)
    }

    /// `authenticateUserAndSignData` (1,0) for a session that is not logged in.
    func requestLevel1(user: String = DaemonHarness.user, payload: String = "pay 10 EUR to bob",
                       reason: String = "payment") throws -> ClientReply {
        try call("authenticateUserAndSignData", [
            "user": user, "payload": payload, "reason": reason, "authLevel": 1, "authenticatorType": 0,
        ])
    }

    /// `setLDASignature`.
    func setLDASignature(kid: String, signature: String) throws -> ClientReply {
        try call("setLDASignature", ["deviceKeyId": kid, "signature": signature])
    }

    /// `setLDASignature` with the device's correct answer to `reply`.
    func answer(_ reply: ClientReply, with device: TestDevice,
                sourceLocation: SourceLocation = #_sourceLocation) throws -> ClientReply {
        try call("setLDASignature", try device.answer(reply, sourceLocation: sourceLocation))
    }
}

extension ClientReply {
    /// `details` of `onAuthenticateUserAndSignData`.
    var signingDetails: JSONValue? {
        event("onAuthenticateUserAndSignData")?["details"]
    }

    /// `deviceKeys` of `getLDASignature`.
    var deviceKeys: [String]? {
        event("getLDASignature")?["deviceKeys"]?.arrayValue?.compactMap(\.stringValue)
    }
}
