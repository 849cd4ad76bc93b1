import Foundation
import StepSignProtocol
@testable import StepSignEngine
import StepSignConfig
import StepSignStorage
import StepSignEngineTestSupport
import Testing

/// Time limits on open challenges, with the clock in the test's hand (SPEC §3, §6):
/// `server.challenge_timeout_seconds` after a challenge opened, an answer to it is error 11 and
/// the challenge is gone; an activation code expires `forgot_password.code_ttl_seconds` after
/// it was issued (answer 106, one attempt used). These replace integration tests that slept
/// 11 s (twice) and 62 s on a real daemon.
@Suite("Challenge expiry")
final class ChallengeExpiryTests: Sendable {
    static let password = "Tr1cky-Pelican-42"
    static let start = Date(timeIntervalSince1970: 1_750_000_000)
    static let peer = Peer(uid: 1000, gid: 1000, pid: 42, comm: "tester", groups: [])
    let directory: String
    let engine: Engine

    init() async throws {
        (engine, directory) = try await makeTestEngine("engine-challenge-expiry") {
            $0.server.challengeTimeoutSeconds = 10
            $0.forgotPassword.codeTTLSeconds = 60
        }
        var admin = Session(peer: testAdminPeer, isAdmin: true)
        let added = await send(#"{"id":1,"op":"admin.addUser","user":"alice","password":"\#(Self.password)"}"#, &admin)
        #expect(added.error == nil, "\(added.text)")
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func send(_ text: String, _ session: inout Session, after seconds: TimeInterval = 0) async -> Reply {
        await engine.handle(line: Array(text.utf8), session: &session, now: Self.start.addingTimeInterval(seconds))
    }

    static let openSigning = #"{"id":2,"op":"authenticateUserAndSignData","user":"alice","payload":"p","reason":"r","authLevel":1,"authenticatorType":0}"#
    static let answerSigning = #"{"id":3,"op":"setPassword","password":"\#(password)","challengeMode":12}"#

    /// The `status.code` and `attemptsLeft` of the reply's first event.
    static func status(_ reply: Reply) -> (code: Int64?, attemptsLeft: Int64?) {
        let event = reply.events.first?.json
        return (event?["status"]?["code"]?.intValue, event?["attemptsLeft"]?.intValue)
    }

    /// The activation code delivered to alice's outbox (delivery follows the reply, SPEC §5.1:
    /// waits up to 10 s for line `number`).
    func deliveredCode(number: Int = 1) async throws -> String {
        let path = directory + "/outbox/alice"
        let deadline = Date().addingTimeInterval(10)
        while true {
            let lines = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n")
            if lines.count >= number {
                let object = try JSONSerialization.jsonObject(with: Data(lines[number - 1].utf8)) as? [String: Any]
                return try #require(object?["activationCode"] as? String)
            }
            try #require(Date() < deadline, "no activation code delivered")
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// A session with alice's mode-0 challenge and a forgotPassword sent at `start`.
    func forgotPassword() async throws -> Session {
        var session = Session(peer: Self.peer, isAdmin: false)
        _ = await send(#"{"id":1,"op":"setUser","user":"alice"}"#, &session)
        let sent = await send(#"{"id":2,"op":"forgotPassword","user":"alice"}"#, &session)
        try #require(sent.events.first?.name == "getActivationCode", "\(sent.text)")
        return session
    }

    @Test("a password answering a signing challenge at challenge_timeout_seconds is accepted and signs")
    func signingWithinTimeout() async throws {
        var session = Session(peer: Self.peer, isAdmin: false)
        #expect(await send(Self.openSigning, &session).events.first?.name == "getPassword")
        let signed = await send(Self.answerSigning, &session, after: 10)
        #expect(signed.error == nil, "\(signed.text)")
        #expect(Self.status(signed).code == 100, "\(signed.text)")
        #expect(try await engine.signing.store.ledgerSignatureCount() == 1)
    }

    @Test("a password answering a signing challenge older than challenge_timeout_seconds is error 11; the challenge is gone")
    func expiredSigningChallenge() async throws {
        var session = Session(peer: Self.peer, isAdmin: false)
        #expect(await send(Self.openSigning, &session).events.first?.name == "getPassword")
        let late = await send(Self.answerSigning, &session, after: 11)
        #expect(late.error?.code == .wrongState, "\(late.text)")
        #expect(late.error?.message.contains("expired") == true, "\(late.text)")
        #expect(late.events.isEmpty)
        #expect(session.pending == nil)
        // Gone: answering again is still 11, and a new signing is not "another authentication in progress".
        #expect(await send(Self.answerSigning, &session, after: 11).error?.code == .wrongState)
        #expect(await send(Self.openSigning, &session, after: 12).events.first?.name == "getPassword")
        let signed = await send(Self.answerSigning, &session, after: 13)
        #expect(Self.status(signed).code == 100, "\(signed.text)")
        #expect(try await engine.signing.store.ledgerSignatureCount() == 1, "only the answer in time signed")
    }

    @Test("an activation code answering a challenge older than challenge_timeout_seconds is error 11; the challenge is gone")
    func expiredActivationChallenge() async throws {
        var session = try await forgotPassword()
        let code = try await deliveredCode()
        let answer = #"{"id":3,"op":"setActivationCode","activationCode":"\#(code)"}"#
        let late = await send(answer, &session, after: 11)
        #expect(late.error?.code == .wrongState, "\(late.text)")
        #expect(late.error?.message.contains("expired") == true, "\(late.text)")
        #expect(await send(answer, &session, after: 11).error?.code == .wrongState)
        #expect(await send(#"{"id":4,"op":"setUser","user":"alice"}"#, &session, after: 12).events.first?.name == "getPassword")
    }

    @Test("an activation code answered within code_ttl_seconds leads to a new password")
    func codeWithinTTL() async throws {
        try await engine.reload(with(engine.config) { $0.server.challengeTimeoutSeconds = 600 }, sha256: [])
        var session = try await forgotPassword()
        let code = try await deliveredCode()
        let reply = await send(#"{"id":3,"op":"setActivationCode","activationCode":"\#(code)"}"#, &session, after: 59)
        #expect(reply.error == nil, "\(reply.text)")
        #expect(reply.events.first?.name == "getPassword", "\(reply.text)")
    }

    @Test("an activation code answered code_ttl_seconds after it was issued answers 106 with one attempt used")
    func expiredCode() async throws {
        // The challenge stays open longer than the code lives, so only the code's expiry speaks.
        try await engine.reload(with(engine.config) { $0.server.challengeTimeoutSeconds = 600 }, sha256: [])
        var session = try await forgotPassword()
        let code = try await deliveredCode()
        let reply = await send(#"{"id":3,"op":"setActivationCode","activationCode":"\#(code)"}"#, &session, after: 60)
        #expect(reply.error == nil, "\(reply.text)")
        #expect(reply.events.map(\.name) == ["getActivationCode"], "\(reply.text)")
        #expect(Self.status(reply).code == 106, "\(reply.text)")
        #expect(Self.status(reply).attemptsLeft == 2, "\(reply.text)")
    }

    private func with(_ config: StepSignConfiguration, _ change: (inout StepSignConfiguration) -> Void) -> StepSignConfiguration {
        var config = config
        change(&config)
        return config
    }
}
