#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StepSignClient
import Testing

/// What a bad input must get (SPEC §3, §3.3, docs/decisions.md "Protocol").
enum BadInputOutcome: Sendable, CustomStringConvertible {
    /// One reply with this error code, no events; the connection stays usable.
    case code(Int)
    /// One reply with this code and `id` null, then the daemon closes the connection.
    case codeThenClosed(Int)
    /// No reply at all; the daemon closes cleanly once the client half-closes.
    case closed

    var description: String {
        switch self {
        case let .code(code): "error \(code)"
        case let .codeThenClosed(code): "error \(code), then closed"
        case .closed: "closed without a reply"
        }
    }
}

/// One kind of bad input: requests (each must be accepted) that set up a state, then the bytes
/// under test (sent as they are: a newline is part of `bytes` where the case wants one).
struct BadInput: Sendable, CustomTestStringConvertible {
    var name: String
    var prelude: [String] = []
    var bytes: [UInt8]
    var expect: BadInputOutcome

    init(_ name: String, prelude: [String] = [], line: String, _ expect: BadInputOutcome) {
        self.name = name
        self.prelude = prelude
        self.bytes = Array((line + "\n").utf8)
        self.expect = expect
    }

    init(_ name: String, prelude: [String] = [], bytes: [UInt8], _ expect: BadInputOutcome) {
        self.name = name
        self.prelude = prelude
        self.bytes = bytes
        self.expect = expect
    }

    var testDescription: String { "\(name) → \(expect)" }
}

/// A signing request with `overrides` applied (a nil value removes the member), as JSON text.
/// Members are written in a fixed order so that cases are reproducible.
private func signRequest(_ overrides: [(String, String?)] = []) -> String {
    var members: [(String, String)] = [
        ("id", "7"), ("op", "\"authenticateUserAndSignData\""), ("user", "\"alice\""), ("payload", "\"pay 1 EUR\""),
        ("reason", "\"test\""), ("authLevel", "0"), ("authenticatorType", "0"),
    ]
    for (key, value) in overrides {
        if let index = members.firstIndex(where: { $0.0 == key }) {
            if let value { members[index].1 = value } else { members.remove(at: index) }
        } else if let value {
            members.append((key, value))
        }
    }
    return "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
}

/// `head`, raw `middle` bytes, `tail`, newline.
private let garbage: [UInt8] = (0..<256).map { (value: Int) -> UInt8 in UInt8((value * 73 + 11) % 256) }.filter { $0 != 0x0A }

private func spliced(_ head: String, _ middle: [UInt8], _ tail: String = "") -> [UInt8] {
    var out: [UInt8] = Array(head.utf8)
    out.append(contentsOf: middle)
    out.append(contentsOf: Array(tail.utf8))
    out.append(0x0A)
    return out
}

private let loginAlice = [
    #"{"id":1,"op":"setUser","user":"alice"}"#,
    #"{"id":2,"op":"setPassword","password":"Tr1cky-Pelican-42","challengeMode":0}"#,
]
private let openSigning = [signRequest([("authLevel", "1")])]

/// Malformed JSON, invalid UTF-8, nesting and size.
private let malformed: [BadInput] = [
    // Malformed JSON (4, connection stays open)
    BadInput("not JSON", line: "{not json", .code(4)),
    BadInput("empty line", line: "", .code(4)),
    BadInput("only whitespace", line: " \t ", .code(4)),
    BadInput("a lone carriage return", bytes: [0x0D, 0x0A], .code(4)),
    BadInput("truncated object", line: #"{"id":1,"op":"sta"#, .code(4)),
    BadInput("missing closing brace", line: #"{"id":1,"op":"status""#, .code(4)),
    BadInput("extra closing brace", line: #"{"id":1,"op":"status"}}"#, .code(4)),
    BadInput("two objects on one line", line: #"{"id":1,"op":"status"} {"id":2,"op":"status"}"#, .code(4)),
    BadInput("single quotes", line: "{'id':1,'op':'status'}", .code(4)),
    BadInput("unquoted member names", line: #"{id:1,op:"status"}"#, .code(4)),
    BadInput("trailing comma", line: #"{"id":1,"op":"status",}"#, .code(4)),
    BadInput("comment", line: #"{"id":1,"op":"status"} // hi"#, .code(4)),
    BadInput("leading zero", line: #"{"id":01,"op":"status"}"#, .code(4)),
    BadInput("NaN", line: #"{"id":NaN,"op":"status"}"#, .code(4)),
    BadInput("Infinity", line: #"{"id":Infinity,"op":"status"}"#, .code(4)),
    BadInput("number overflowing a double", line: #"{"id":1e999,"op":"status"}"#, .code(4)),
    BadInput("negative number overflowing a double", line: #"{"id":-1e999,"op":"status"}"#, .code(4)),
    BadInput("a bare minus", line: #"{"id":-,"op":"status"}"#, .code(4)),
    BadInput("invalid escape", line: #"{"id":1,"op":"sta\xtus"}"#, .code(4)),
    BadInput("short \\u escape", line: #"{"id":1,"op":"\u12"}"#, .code(4)),
    BadInput("lone high surrogate", line: #"{"id":1,"op":"status","x":"\ud800"}"#, .code(4)),
    BadInput("lone low surrogate", line: #"{"id":1,"op":"status","x":"\udc00"}"#, .code(4)),
    BadInput("raw tab inside a string", line: "{\"id\":1,\"op\":\"sta\ttus\"}", .code(4)),
    BadInput("NUL byte outside a string", bytes: spliced(#"{"id":1,"op":"status"}"#, [0]), .code(4)),
    BadInput("NUL bytes only", bytes: [0, 0, 0, 0x0A], .code(4)),
    BadInput("byte order mark", bytes: spliced("", [0xEF, 0xBB, 0xBF], #"{"id":1,"op":"status"}"#), .code(4)),
    BadInput("binary garbage", bytes: spliced("", garbage), .code(4)),
    // Invalid UTF-8 (4)
    BadInput("invalid UTF-8 byte 0xFF", bytes: spliced(#"{"id":1,"op":"st"#, [0xFF], #"atus"}"#), .code(4)),
    BadInput("overlong UTF-8 encoding", bytes: spliced(#"{"id":1,"op":"status","x":""#, [0xC0, 0xAF], #""}"#), .code(4)),
    BadInput("UTF-8-encoded surrogate", bytes: spliced(#"{"id":1,"op":"status","x":""#, [0xED, 0xA0, 0x80], #""}"#), .code(4)),
    BadInput("truncated UTF-8 sequence", bytes: spliced(#"{"id":1,"op":"status","x":""#, [0xE2, 0x82], #""}"#), .code(4)),
    BadInput("code point above U+10FFFF", bytes: spliced(#"{"id":1,"op":"status","x":""#, [0xF4, 0x90, 0x80, 0x80], #""}"#), .code(4)),
    // Nesting and size (4; an over-long line is answered once and closed)
    BadInput("nesting 33 deep", line: String(repeating: "[", count: 33) + String(repeating: "]", count: 33), .code(4)),
    BadInput("nesting 30,000 deep", line: String(repeating: "[", count: 30_000), .code(4)),
    BadInput("deep object in a parameter", line: #"{"id":1,"op":"status","x":"# + String(repeating: #"{"a":"#, count: 40) + "1" + String(repeating: "}", count: 41), .code(4)),
    BadInput("a line just over 64 KiB", line: #"{"id":1,"op":"status","x":""# + String(repeating: "a", count: 65_520) + #""}"#, .codeThenClosed(4)),
    BadInput("a 1 MiB line", line: #"{"id":1,"op":"status","x":""# + String(repeating: "a", count: 1 << 20) + #""}"#, .codeThenClosed(4)),
    BadInput("a 1 MiB line without a newline", bytes: Array(repeating: UInt8(ascii: "x"), count: 1 << 20), .codeThenClosed(4)),
    BadInput("a last line without a newline", bytes: Array(#"{"id":1,"op":"status"}"#.utf8), .closed),
    BadInput("6,000 members", line: "{" + (0..<6000).map { #""m\#($0)":0"# }.joined(separator: ",") + #","id":1,"op":"status"}"#, .code(4)),
    ]

/// Well-formed JSON that is not a good request.
private let mistyped: [BadInput] = [
    // Not a request (4)
    BadInput("top-level array", line: "[1,2,3]", .code(4)),
    BadInput("top-level string", line: #""status""#, .code(4)),
    BadInput("top-level number", line: "42", .code(4)),
    BadInput("top-level null", line: "null", .code(4)),
    BadInput("empty object", line: "{}", .code(4)),
    // Wrong types, nulls, unknown and duplicate fields (4)
    BadInput("id is an array", line: #"{"id":[1],"op":"status"}"#, .code(4)),
    BadInput("id is an object", line: #"{"id":{"a":1},"op":"status"}"#, .code(4)),
    BadInput("id is a boolean", line: #"{"id":true,"op":"status"}"#, .code(4)),
    BadInput("id is null", line: #"{"id":null,"op":"status"}"#, .code(4)),
    BadInput("op missing", line: #"{"id":1}"#, .code(4)),
    BadInput("op is a number", line: #"{"id":1,"op":7}"#, .code(4)),
    BadInput("op is null", line: #"{"id":1,"op":null}"#, .code(4)),
    BadInput("op is empty", line: #"{"id":1,"op":""}"#, .code(4)),
    BadInput("unknown op", line: #"{"id":1,"op":"formatDisk"}"#, .code(4)),
    BadInput("op in the wrong case", line: #"{"id":1,"op":"STATUS"}"#, .code(4)),
    BadInput("op with a NUL", line: #"{"id":1,"op":"status\u0000"}"#, .code(4)),
    BadInput("unknown parameter", line: #"{"id":1,"op":"status","verbose":true}"#, .code(4)),
    BadInput("unknown parameter set to null", line: #"{"id":1,"op":"status","verbose":null}"#, .code(4)),
    BadInput("misspelt signing parameter", line: signRequest([("reasn", "\"x\"")]), .code(4)),
    BadInput("duplicate id", line: #"{"id":1,"op":"status","id":2}"#, .code(4)),
    BadInput("duplicate op", line: #"{"id":1,"op":"status","op":"admin.listUsers"}"#, .code(4)),
    BadInput("duplicate payload", line: signRequest([("payload", "\"a\",\"payload\":\"b\"")]), .code(4)),
    BadInput("duplicate member spelt with an escape", line: #"{"id":1,"op":"status","\u006fp":"status"}"#, .code(4)),
    BadInput("payload is a number", line: signRequest([("payload", "5")]), .code(4)),
    BadInput("payload is an array", line: signRequest([("payload", #"["a"]"#)]), .code(4)),
    BadInput("payload is null", line: signRequest([("payload", "null")]), .code(4)),
    BadInput("payload missing", line: signRequest([("payload", nil)]), .code(4)),
    BadInput("payload empty", line: signRequest([("payload", #""""#)]), .code(4)),
    BadInput("payload blank", line: signRequest([("payload", #"" \t\n ""#)]), .code(4)),
    BadInput("payload of 501 characters", line: signRequest([("payload", "\"" + String(repeating: "é", count: 501) + "\"")]), .code(4)),
    BadInput("reason of 101 characters", line: signRequest([("reason", "\"" + String(repeating: "r", count: 101) + "\"")]), .code(4)),
    BadInput("reason of two lines", line: signRequest([("reason", #""a\nb""#)]), .code(4)),
    BadInput("authLevel is a string", line: signRequest([("authLevel", #""0""#)]), .code(4)),
    BadInput("authLevel is a boolean", line: signRequest([("authLevel", "false")]), .code(4)),
    BadInput("authLevel is null", line: signRequest([("authLevel", "null")]), .code(4)),
    BadInput("authLevel is negative", line: signRequest([("authLevel", "-1")]), .code(4)),
    BadInput("authLevel is a fraction", line: signRequest([("authLevel", "0.5")]), .code(4)),
    BadInput("authLevel is huge", line: signRequest([("authLevel", "1e300")]), .code(4)),
    BadInput("authLevel past Int64", line: signRequest([("authLevel", "9223372036854775808")]), .code(4)),
    BadInput("authLevel at Int64.min", line: signRequest([("authLevel", "-9223372036854775808")]), .code(4)),
    BadInput("authenticatorType is huge", line: signRequest([("authenticatorType", "123456789012345678901234567890")]), .code(4)),
    BadInput("user missing when not logged in", line: signRequest([("user", nil)]), .code(4)),
    BadInput("user is null", line: signRequest([("user", "null")]), .code(4)),
    BadInput("user is empty", line: signRequest([("user", #""""#)]), .code(4)),
    BadInput("user with a space", line: signRequest([("user", #""al ice""#)]), .code(4)),
    BadInput("user with a control character", line: signRequest([("user", #""al\u0007ice""#)]), .code(4)),
    BadInput("user of 65 characters", line: signRequest([("user", "\"" + String(repeating: "u", count: 65) + "\"")]), .code(4)),
    BadInput("challengeMode is a string", prelude: openSigning, line: #"{"id":2,"op":"setPassword","password":"x","challengeMode":"12"}"#, .code(4)),
    BadInput("password is a number", prelude: openSigning, line: #"{"id":2,"op":"setPassword","password":12345678,"challengeMode":12}"#, .code(4)),
    BadInput("consent is a string", line: #"{"id":1,"op":"setUserConsentForLDA","consent":"yes"}"#, .code(4)),
    BadInput("credential type unknown", prelude: loginAlice, line: #"{"id":3,"op":"initiateUpdateFlowForCredential","credentialType":"Retina"}"#, .code(4)),
    BadInput("public key that is not a key", prelude: loginAlice, line: #"{"id":3,"op":"enrollDeviceKey","publicKey":"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----","label":"x"}"#, .code(4)),
    BadInput("signature ID that is not a UUID (asked by an admin)", line: #"{"id":1,"op":"getSignature","signatureID":"../../etc/passwd"}"#, .code(4)),
    BadInput("admin.exportLedger with a negative afterSeq", line: #"{"id":1,"op":"admin.exportLedger","afterSeq":-5}"#, .code(4)),
    BadInput("admin.exportLedger with a huge limit", line: #"{"id":1,"op":"admin.exportLedger","limit":1e300}"#, .code(4)),
    ]

/// Requests refused by the matrix, the configuration or the session's state.
private let misplaced: [BadInput] = [
    // The authentication matrix and configuration (214, 170)
    BadInput("level 2", line: signRequest([("authLevel", "2")]), .code(214)),
    BadInput("level 3", line: signRequest([("authLevel", "3")]), .code(214)),
    BadInput("level 4 with type 0", line: signRequest([("authLevel", "4")]), .code(214)),
    BadInput("level 1 with type 1", line: signRequest([("authLevel", "1"), ("authenticatorType", "1")]), .code(214)),
    BadInput("level 0 with type 1", line: signRequest([("authenticatorType", "1")]), .code(214)),
    BadInput("level 4 type 1 without IDV", line: signRequest([("authLevel", "4"), ("authenticatorType", "1")]), .code(170)),
    BadInput("forgotPassword without a login challenge", line: #"{"id":1,"op":"forgotPassword","user":"alice"}"#, .code(170)),
    // Requests in the wrong state (11, 213, 148, 167)
    BadInput("setPassword with nothing open", line: #"{"id":1,"op":"setPassword","password":"x","challengeMode":12}"#, .code(11)),
    BadInput("setPassword mode 0 with nothing open", line: #"{"id":1,"op":"setPassword","password":"x","challengeMode":0}"#, .code(11)),
    BadInput("setPassword in the wrong mode", prelude: openSigning, line: #"{"id":2,"op":"setPassword","password":"x","challengeMode":0}"#, .code(11)),
    BadInput("updatePassword with nothing open", line: #"{"id":1,"op":"updatePassword","currentPassword":"a","newPassword":"b","challengeMode":2}"#, .code(11)),
    BadInput("setActivationCode with nothing open", line: #"{"id":1,"op":"setActivationCode","activationCode":"12345678"}"#, .code(11)),
    BadInput("resendActivationCode with nothing open", line: #"{"id":1,"op":"resendActivationCode"}"#, .code(11)),
    BadInput("setLDASignature with nothing open", line: #"{"id":1,"op":"setLDASignature","deviceKeyId":"k","signature":"AA"}"#, .code(11)),
    BadInput("setLDASignature to a password challenge", prelude: openSigning, line: #"{"id":2,"op":"setLDASignature","deviceKeyId":"k","signature":"AA"}"#, .code(11)),
    BadInput("setIDVBiometricAssertion with nothing open", line: #"{"id":1,"op":"setIDVBiometricAssertion","assertion":"a.b.c"}"#, .code(11)),
    BadInput("setUserConsentForLDA with nothing open", line: #"{"id":1,"op":"setUserConsentForLDA","consent":true}"#, .code(11)),
    BadInput("logOff when not logged in", line: #"{"id":1,"op":"logOff"}"#, .code(11)),
    BadInput("getAllChallenges when not logged in", line: #"{"id":1,"op":"getAllChallenges"}"#, .code(11)),
    BadInput("initiateUpdateFlowForCredential when not logged in", line: #"{"id":1,"op":"initiateUpdateFlowForCredential","credentialType":"Password"}"#, .code(11)),
    BadInput("setUser when logged in", prelude: loginAlice, line: #"{"id":3,"op":"setUser","user":"alice"}"#, .code(11)),
    BadInput("a second signing while one is open", prelude: openSigning, line: signRequest([("authLevel", "1")]), .code(213)),
    BadInput("setUser while a signing is open", prelude: openSigning, line: #"{"id":2,"op":"setUser","user":"alice"}"#, .code(213)),
    BadInput("signing for a blocked user", line: signRequest([("user", "\"carol\""), ("authLevel", "1")]), .code(148)),
    BadInput("login answer for a blocked user", prelude: [#"{"id":1,"op":"setUser","user":"carol"}"#], line: #"{"id":2,"op":"setPassword","password":"Tr1cky-Pelican-42","challengeMode":0}"#, .code(148)),
    BadInput("same current and new password", prelude: loginAlice + [#"{"id":3,"op":"initiateUpdateFlowForCredential","credentialType":"Password"}"#],
             line: #"{"id":4,"op":"updatePassword","currentPassword":"Tr1cky-Pelican-42","newPassword":"Tr1cky-Pelican-42","challengeMode":2}"#, .code(167)),
    BadInput("another user's signing while logged in", prelude: loginAlice, line: signRequest([("user", "\"bob\"")]), .code(4)),
]

/// The catalogue: at least 50 kinds of bad input and what each gets.
let badInputs: [BadInput] = malformed + mistyped + misplaced

/// Hostile input on the socket (SPEC §3, §3.3): every kind gets its code or a clean close, and
/// the daemon keeps serving everyone else.
@Suite("Bad input", .blockingSerialized, .serialized, SharedDaemon())
struct BadInputTests {
    @Test("a bad input gets its SPEC code (or a clean close) and other clients are still served", arguments: badInputs)
    func badInput(_ input: BadInput) throws {
        let daemon = try #require(SharedDaemon.current)
        let client = try RawClient(socketPath: daemon.socketPath)
        for request in input.prelude {
            let reply = try client.call(request)
            try #require(reply.code == 0, "prelude \(request): \(reply.code) \(reply.message)")
        }
        // A peer closing on us mid-send (the over-long lines) is part of the expected outcome.
        do { try client.send(input.bytes) } catch { _ = error }
        switch input.expect {
        case let .code(code):
            let reply = try client.reply()
            #expect(reply.code == code, "\(reply.message)")
            if code != 0 { #expect(reply.events.isEmpty) }
            #expect(try client.call(#"{"id":"after","op":"status"}"#).code == 0, "the connection stays usable")
        case let .codeThenClosed(code):
            let reply = try client.reply()
            #expect(reply.code == code, "\(reply.message)")
            #expect(reply.id == .null)
            #expect(client.next(timeout: 10) == .closed)
        case .closed:
            client.shutdownWrite()
            #expect(client.next(timeout: 10) == .closed)
        }
        try SharedDaemon.checkServed(daemon)
    }

    @Test("the catalogue has at least 50 kinds of bad input, each named once")
    func catalogueSize() {
        #expect(badInputs.count >= 50)
        #expect(Set(badInputs.map(\.name)).count == badInputs.count)
    }

    @Test("after every case: the control connection is served, a level-0 signing works, the ledger verifies")
    func stillServing() throws {
        let daemon = try #require(SharedDaemon.current)
        try SharedDaemon.checkServed(daemon)
        let connection = try daemon.connect()
        let signed = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "still here", "reason": "after the bad input", "authLevel": 0, "authenticatorType": 0,
        ])
        #expect(signed.code == 0)
        #expect(signed.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        #expect(try connection.call("admin.auditVerify").result?["ok"]?.boolValue == true)
        #expect(daemon.pid != nil, "the daemon still runs")
    }
}

/// One daemon for the whole catalogue, with a control connection that must keep being served.
struct SharedDaemon: SuiteTrait, TestScoping {
    @TaskLocal static var current: DaemonHarness?

    var isRecursive: Bool { false }

    private final class Control: @unchecked Sendable {
        let lock = NSLock()
        var connection: StepSignConnection?
    }

    private static let control = Control()

    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        // The control connection waits through the whole catalogue (335 s once on a loaded
        // host): longer than the harness's 300 s idle timeout, which would end it rightly.
        let daemon = try DaemonHarness(config: "[server]\nidle_timeout_seconds = 3600")
        try daemon.addUser()
        try daemon.addUser("carol")
        // Block carol: three wrong step-up answers.
        let connection = try daemon.connect()
        _ = try connection.signWithPassword(user: "carol", password: Passwords.wrong)
        for _ in 0..<2 { _ = try connection.call("setPassword", ["password": Passwords.wrong, "challengeMode": 12]) }
        let carol = try connection.call("admin.listUsers").result?["users"]?.arrayValue ?? []
        try #require(carol.contains { $0["user"]?.stringValue == "carol" && $0["blocked"]?.boolValue == true }, "carol is blocked")
        Self.control.lock.withLock { Self.control.connection = try? daemon.connect() }
        try await Self.$current.withValue(daemon) { try await function() }
        Self.control.lock.withLock { Self.control.connection = nil }
        #expect(daemon.stop() == 0, "the daemon stops cleanly after the catalogue")
    }

    /// The long-lived control connection and a new one both get `status`.
    static func checkServed(_ daemon: DaemonHarness) throws {
        try control.lock.withLock {
            let connection = try #require(control.connection)
            let reply = try connection.call("status", timeout: 20)
            #expect(reply.code == 0, "control connection: \(reply.message)")
        }
        #expect(try daemon.connect().call("status", timeout: 20).code == 0)
    }
}
