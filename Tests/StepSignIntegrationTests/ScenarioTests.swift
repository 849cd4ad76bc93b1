import Foundation
import StepSignClient
import StepSignProtocol
import Testing

/// SPEC §3 flows written once and run in two places: in-process against the engine on an
/// injected clock, and against the real daemon over its socket (`ScenarioPlace`). Scenarios that
/// move the clock run in-process only; the real daemon's time limits are its own tests'.
@Suite("Scenarios, in-process and live", .blocking)
struct ScenarioTests {
    static let user = "alice"
    static let password = "Tr1cky-Pelican-42"

    private func hostWithUser(_ place: ScenarioPlace, config: String = "") async throws -> ScenarioHost {
        let host = try await ScenarioHost(place, config: config)
        let added = try await host.connect().call("admin.addUser", ["user": .string(Self.user), "password": .string(Self.password)])
        #expect(added.code == 0, "\(added.object.jsonText)")
        return host
    }

    private func openSigning(_ connection: ScenarioConnection) async throws -> ClientReply {
        try await connection.call("authenticateUserAndSignData", [
            "user": .string(Self.user), "payload": "pay 10 EUR to bob", "reason": "invoice 7", "authLevel": 1, "authenticatorType": 0,
        ])
    }

    @Test("level 1: a password challenge, a wrong answer counted, the right one signs", arguments: ScenarioPlace.allCases)
    func levelOneSigning(_ place: ScenarioPlace) async throws {
        let host = try await hostWithUser(place)
        let connection = try host.connect()
        let challenge = try await openSigning(connection)
        #expect(challenge.code == 0)
        #expect(challenge.event("getPassword")?["challengeMode"] == 12)
        #expect(challenge.event("getPassword")?["attemptsLeft"] == 3)

        let wrong = try await connection.call("setPassword", ["password": "not-it-at-all-9", "challengeMode": 12])
        #expect(wrong.statusCode(of: "getPassword") == 102)
        #expect(wrong.event("getPassword")?["attemptsLeft"] == 2)

        let right = try await connection.call("setPassword", ["password": .string(Self.password), "challengeMode": 12])
        let details = right.event("onAuthenticateUserAndSignData")?["details"]
        #expect(right.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        #expect(details?["dataPayload"] == "pay 10 EUR to bob")
        #expect(details?["authenticatorUsed"] == "password")
        #expect(details?["payloadSignature"]?.stringValue?.split(separator: ".").count == 3)
    }

    @Test("max_attempts wrong answers block the user: a new signing request is 148 and the right password has nothing to answer", arguments: ScenarioPlace.allCases)
    func blocking(_ place: ScenarioPlace) async throws {
        let host = try await hostWithUser(place)
        let connection = try host.connect()
        _ = try await openSigning(connection)
        var statuses: [Int?] = []
        for _ in 0..<3 {
            let reply = try await connection.call("setPassword", ["password": "not-it-at-all-9", "challengeMode": 12])
            statuses.append(reply.statusCode(of: "getPassword") ?? reply.statusCode(of: "onAuthenticateUserAndSignData"))
        }
        #expect(statuses == [102, 102, 153])

        let again = try host.connect()
        let reopened = try await openSigning(again)
        let answer = try await again.call("setPassword", ["password": .string(Self.password), "challengeMode": 12])
        #expect(reopened.code == 148)
        #expect(answer.code == 11)
        #expect(answer.eventNames.isEmpty)
    }

    @Test("a challenge left open past challenge_timeout_seconds is error 11 when answered")
    func challengeTimeout() async throws {
        let host = try await hostWithUser(.inProcess, config: "[server]\nchallenge_timeout_seconds = 30")
        let connection = try host.connect()
        _ = try await openSigning(connection)
        host.advance(seconds: 31)
        let late = try await connection.call("setPassword", ["password": .string(Self.password), "challengeMode": 12])
        #expect(late.code == 11)
        #expect(late.eventNames.isEmpty)
    }

    @Test("a login ends after session_max_seconds: the next request that needs it is error 5")
    func loginLifetime() async throws {
        let host = try await hostWithUser(.inProcess, config: "[server]\nsession_max_seconds = 120")
        let connection = try host.connect()
        let asked = try await connection.call("setUser", ["user": .string(Self.user)])
        #expect(asked.event("getPassword")?["challengeMode"] == 0)
        let login = try await connection.call("setPassword", ["password": .string(Self.password), "challengeMode": 0])
        #expect(login.eventNames.contains("onUserLoggedIn"))
        host.advance(seconds: 60)
        #expect(try await connection.call("getAllChallenges").code == 0)
        host.advance(seconds: 61)
        #expect(try await connection.call("getAllChallenges").code == 5)
    }
}
