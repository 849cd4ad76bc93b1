import Foundation
import StepSignProtocol
import StepSignClient
import StepSignCrypto
import StepSignFormat
import Testing

/// `authenticateUserAndSignData` against the real daemon (SPEC §3.2, signing).
@Suite("Signing flow", .blocking)
struct SigningFlowTests {
    @Test("(0,0) signs at once when allow_level_0 is on, and the JWS verifies offline")
    func levelZeroSigns() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        let reply = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "hello", "reason": "test", "authLevel": 0, "authenticatorType": 0,
        ])
        #expect(reply.code == 0)
        #expect(reply.eventNames == ["onAuthenticateUserAndSignData"])
        #expect(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        let details = try #require(reply.event("onAuthenticateUserAndSignData")?["details"])
        #expect(details["authenticatorUsed"]?.stringValue == "none")
        let claims = try StepSignSignature.verify(try #require(details["payloadSignature"]?.stringValue),
                                                  trustedKeys: try connection.trustedKeys())
        #expect(claims.payload == "hello")
        #expect(claims.authLevel == 0)
        #expect(claims.iss == "stepsign-test")
    }

    @Test("(0,0) is refused with 170 when allow_level_0 is off")
    func levelZeroDisabled() throws {
        let daemon = try DaemonHarness(config: "[signing]\nallow_level_0 = false")
        let reply = try daemon.connect().call("authenticateUserAndSignData", [
            "user": "alice", "payload": "hello", "reason": "test", "authLevel": 0, "authenticatorType": 0,
        ])
        #expect(reply.code == 170)
        #expect(reply.events.isEmpty)
    }

    @Test("(1,0) asks for the password in mode 12, then signs with every detail of SPEC §3.1")
    func passwordStepUp() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        let challenge = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "pay 10 EUR", "reason": "payment", "authLevel": 1, "authenticatorType": 0,
        ])
        #expect(challenge.code == 0)
        let prompt = try #require(challenge.event("getPassword"))
        #expect(prompt["challengeMode"]?.int == 12)
        #expect(prompt["attemptsLeft"]?.int == 3)
        #expect(prompt["user"]?.stringValue == "alice")
        #expect(challenge.statusCode(of: "getPassword") == 100)

        let result = try connection.call("setPassword", ["password": DaemonHarness.password, "challengeMode": 12])
        #expect(result.code == 0)
        #expect(result.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        let event = try #require(result.event("onAuthenticateUserAndSignData"))
        #expect((event["error"])?["code"]?.int == 0)
        let details = try #require(event["details"])
        #expect(details["dataPayload"]?.stringValue == "pay 10 EUR")
        #expect(details["dataPayloadLength"]?.int == 10)
        #expect(details["reason"]?.stringValue == "payment")
        #expect(details["authLevel"]?.int == 1)
        #expect(details["authenticatorType"]?.int == 0)
        #expect(details["authenticatorUsed"]?.stringValue == "password")
        let signatureID = try #require(details["dataSignatureID"]?.stringValue)
        #expect(signatureID.range(of: "^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
                                  options: .regularExpression) != nil)
        let claims = try StepSignSignature.verify(try #require(details["payloadSignature"]?.stringValue),
                                                  trustedKeys: try connection.trustedKeys())
        #expect(claims.sub == "alice")
        #expect(claims.jti == signatureID)
        #expect(claims.authenticatorUsed == "password")
    }

    @Test("a wrong password counts down with 102, the last one answers 153 and blocks the user")
    func wrongPasswordsBlock() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        let first = try connection.signWithPassword(user: "alice", password: "wrong-1")
        #expect(first.statusCode(of: "getPassword") == 102)
        #expect(first.event("getPassword")?["attemptsLeft"]?.int == 2)
        let second = try connection.call("setPassword", ["password": "wrong-2", "challengeMode": 12])
        #expect(second.event("getPassword")?["attemptsLeft"]?.int == 1)
        let third = try connection.call("setPassword", ["password": "wrong-3", "challengeMode": 12])
        #expect(third.eventNames == ["onAuthenticateUserAndSignData"])
        #expect(third.statusCode(of: "onAuthenticateUserAndSignData") == 153)
        let details = third.event("onAuthenticateUserAndSignData")?["details"]
        #expect(details?["payloadSignature"]?.stringValue == "")

        let blocked = try connection.signWithPassword(user: "alice", password: DaemonHarness.password)
        #expect(blocked.code == 148)
    }

    @Test("admin.unlockUser lets a blocked user sign again")
    func unlockAfterBlock() throws {
        let daemon = try DaemonHarness(config: "[password]\nmax_attempts = 1")
        try daemon.addUser()
        let connection = try daemon.connect()
        let exhausted = try connection.signWithPassword(user: "alice", password: "wrong")
        #expect(exhausted.statusCode(of: "onAuthenticateUserAndSignData") == 153)
        #expect(try connection.call("admin.unlockUser", ["user": "alice"]).code == 0)
        let signed = try connection.signWithPassword(user: "alice", password: DaemonHarness.password)
        #expect(signed.statusCode(of: "onAuthenticateUserAndSignData") == 100)
    }

    @Test("attempt counters are stored: a new connection does not get fresh attempts")
    func attemptsSurviveReconnect() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        _ = try daemon.connect().signWithPassword(user: "alice", password: "wrong")
        let again = try daemon.connect().call("authenticateUserAndSignData", [
            "user": "alice", "payload": "x", "reason": "y", "authLevel": 1, "authenticatorType": 0,
        ])
        #expect(again.event("getPassword")?["attemptsLeft"]?.int == 2)
    }

    @Test("an unknown user gets the same challenge and the same failure as a known one")
    func unknownUserLooksKnown() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        let challenge = try connection.call("authenticateUserAndSignData", [
            "user": "nobody-here", "payload": "x", "reason": "y", "authLevel": 1, "authenticatorType": 0,
        ])
        #expect(challenge.code == 0)
        #expect(challenge.event("getPassword")?["attemptsLeft"]?.int == 3)
        let wrong = try connection.call("setPassword", ["password": "guess", "challengeMode": 12])
        #expect(wrong.statusCode(of: "getPassword") == 102)
        #expect(wrong.event("getPassword")?["attemptsLeft"]?.int == 2)
    }

    @Test("pairs outside the matrix are refused with 214", arguments: [(2, 0), (3, 0), (4, 0), (4, 2), (1, 1), (0, 1), (5, 0)])
    func unsupportedPairs(level: Int, type: Int) throws {
        let daemon = try DaemonHarness()
        let reply = try daemon.connect().call("authenticateUserAndSignData", [
            "user": "alice", "payload": "x", "reason": "y", "authLevel": level, "authenticatorType": type,
        ])
        #expect(reply.code == 214)
    }

    @Test("payload and reason limits count characters and refuse blank text with 4")
    func payloadAndReasonLimits() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        func sign(_ payload: String, _ reason: String) throws -> Int {
            try connection.call("authenticateUserAndSignData", [
                "user": "alice", "payload": payload, "reason": reason, "authLevel": 0, "authenticatorType": 0,
            ]).code
        }
        #expect(try sign("", "r") == 4)
        #expect(try sign("   \n", "r") == 4)
        #expect(try sign(String(repeating: "a", count: 501), "r") == 4)
        #expect(try sign(String(repeating: "👍🏽", count: 500), "r") == 0)
        #expect(try sign("p", String(repeating: "é", count: 101)) == 4)
        #expect(try sign("p", String(repeating: "é", count: 100)) == 0)
        #expect(try sign("p", " ") == 4)
    }

    @Test("setPassword with no open challenge, or in the wrong mode, is error 11")
    func setPasswordWrongState() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        #expect(try connection.call("setPassword", ["password": "x", "challengeMode": 12]).code == 11)
        _ = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "x", "reason": "y", "authLevel": 1, "authenticatorType": 0,
        ])
        #expect(try connection.call("setPassword", ["password": DaemonHarness.password, "challengeMode": 0]).code == 11)
    }

    @Test("a second signing while one is pending is error 213")
    func secondSigningInProgress() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        let request: KeyValuePairs<String, any JSONValueConvertible> = ["user": "alice", "payload": "x", "reason": "y", "authLevel": 1, "authenticatorType": 0]
        #expect(try connection.call("authenticateUserAndSignData", request).code == 0)
        #expect(try connection.call("authenticateUserAndSignData", request).code == 213)
    }

    @Test("resetAuthenticateUserAndSignDataState cancels the pending signing and is safe to repeat")
    func resetIsIdempotent() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "x", "reason": "y", "authLevel": 1, "authenticatorType": 0,
        ])
        for _ in 0..<3 {
            #expect(try connection.call("resetAuthenticateUserAndSignDataState").code == 0)
        }
        #expect(try connection.call("setPassword", ["password": DaemonHarness.password, "challengeMode": 12]).code == 11)
    }
}
