import Foundation
import StepSignProtocol
@testable import StepSignEngine
import StepSignCrypto
import StepSignEngineTestSupport
import Testing

/// The three step-up authenticators behind one protocol: which answers each takes, and what
/// each asks after a wrong answer (the same challenge, or a fresh one with a new time).
@Suite("Step-up authenticators")
final class StepUpAuthenticatorTests: Sendable {
    let directory: String
    let engine: Engine

    init() async throws {
        (engine, directory) = try await makeTestEngine("engine-step-up")
        try await addTestUser(engine)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    static let peer = Peer(uid: 1000, gid: 1000, pid: 42, comm: "tester", groups: [])
    static let open = #"{"id":1,"op":"authenticateUserAndSignData","user":"alice","payload":"p","reason":"r","authLevel":1,"authenticatorType":0}"#
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func send(_ line: String, _ session: inout Session, at now: Date) async -> Reply {
        await engine.handle(line: Array(line.utf8), session: &session, now: now)
    }

    func enrollDevice() async throws -> P256PrivateKey {
        let device = try P256PrivateKey.generate()
        var admin = Session(peer: testAdminPeer, isAdmin: true)
        let pem = device.publicKey.spkiPEM.replacingOccurrences(of: "\n", with: "\\n")
        let enrolled = await send(#"{"id":2,"op":"admin.enrollDeviceKey","user":"alice","publicKey":"\#(pem)"}"#, &admin, at: Self.t0)
        #expect(enrolled.error == nil, "\(enrolled.line)")
        return device
    }

    static func openChallenge(_ session: Session) -> SigningChallenge? {
        guard case let .signing(challenge)? = session.pending else { return nil }
        return challenge
    }

    @Test("each takes its own kind of answer; a device key challenge also takes the password")
    func answerKinds() throws {
        let password: any StepUpAuthenticator = PasswordStepUp()
        let device: any StepUpAuthenticator = DeviceKeyStepUp(challenge: DeviceChallenge(nonce: "n", bytes: [1], deviceKeyIDs: ["k"]))
        let signing = SigningRequest(user: "alice", payload: "p", payloadLength: 1, reason: "r", authLevel: 4, authenticatorType: 1)
        let idv: any StepUpAuthenticator = try IDVBiometricStepUp(for: signing.subject, peer: Self.peer)
        let answers: [StepUpAnswer] = [.password("x"), .deviceSignature(kid: "k", signature: "s"), .idvAssertion("a")]
        #expect(answers.map { password.answerer(for: $0)?.used } == ["password", nil, nil])
        #expect(answers.map { device.answerer(for: $0)?.used } == ["password", "lda", nil])
        #expect(answers.map { idv.answerer(for: $0)?.used } == [nil, nil, "idv-biometric"])
    }

    @Test("a wrong password asks again with the same challenge, whose time keeps running")
    func passwordRetryKeepsItsTime() async throws {
        var session = Session(peer: Self.peer)
        _ = await send(Self.open, &session, at: Self.t0)
        let wrong = await send(#"{"id":2,"op":"setPassword","password":"nope","challengeMode":12}"#, &session,
                               at: Self.t0.addingTimeInterval(10))
        guard case let .getPassword(_, mode, attemptsLeft, status, _, _)? = wrong.events.first else {
            Issue.record("no getPassword: \(wrong.line)"); return
        }
        #expect(mode == .stepUpForSigning && status.code == .authenticationFailed && attemptsLeft == engine.config.password.maxAttempts - 1)
        let challenge = try #require(Self.openChallenge(session))
        #expect(challenge.authenticator is PasswordStepUp)
        #expect(challenge.openedAt == Self.t0)
    }

    @Test("a wrong device signature asks again with a fresh nonce and a new time")
    func deviceRetryIsFresh() async throws {
        let device = try await enrollDevice()
        var session = Session(peer: Self.peer)
        _ = await send(Self.open, &session, at: Self.t0)
        let first = try #require((Self.openChallenge(session)?.authenticator as? DeviceKeyStepUp)?.challenge)
        let kid = device.publicKey.thumbprint
        let bogus = Base64URL.encode([UInt8](repeating: 7, count: 64))
        let later = Self.t0.addingTimeInterval(10)
        let wrong = await send(#"{"id":2,"op":"setLDASignature","deviceKeyId":"\#(kid)","signature":"\#(bogus)"}"#, &session, at: later)
        guard case let .getLDASignature(_, _, text, _, _, status, _)? = wrong.events.first else {
            Issue.record("no getLDASignature: \(wrong.line)"); return
        }
        #expect(status.code == .authenticationFailed)
        let reopened = try #require(Self.openChallenge(session))
        let second = try #require((reopened.authenticator as? DeviceKeyStepUp)?.challenge)
        #expect(second.nonce != first.nonce && text == Base64URL.encode(second.bytes))
        #expect(reopened.openedAt == later)
        // The old challenge's signature no longer answers.
        let stale = Base64URL.encode(try device.signatureES256(for: first.bytes))
        let replayed = await send(#"{"id":3,"op":"setLDASignature","deviceKeyId":"\#(kid)","signature":"\#(stale)"}"#, &session, at: later)
        guard case let .getLDASignature(_, _, _, _, _, again, _)? = replayed.events.first else {
            Issue.record("no getLDASignature: \(replayed.line)"); return
        }
        #expect(again.code == .authenticationFailed)
    }

    @Test("a device challenge whose keys were all revoked asks for the password after a wrong answer")
    func deviceFallsBackToPassword() async throws {
        let device = try await enrollDevice()
        var session = Session(peer: Self.peer)
        _ = await send(Self.open, &session, at: Self.t0)
        var admin = Session(peer: testAdminPeer, isAdmin: true)
        let kid = device.publicKey.thumbprint
        let revoked = await send(#"{"id":3,"op":"admin.revokeDeviceKey","user":"alice","deviceKeyId":"\#(kid)"}"#, &admin, at: Self.t0)
        #expect(revoked.error == nil, "\(revoked.line)")
        let right = Base64URL.encode(try device.signatureES256(
            for: try #require((Self.openChallenge(session)?.authenticator as? DeviceKeyStepUp)?.challenge).bytes))
        let refused = await send(#"{"id":4,"op":"setLDASignature","deviceKeyId":"\#(kid)","signature":"\#(right)"}"#, &session, at: Self.t0)
        guard case let .getPassword(_, mode, _, status, _, _)? = refused.events.first else {
            Issue.record("no getPassword: \(refused.line)"); return
        }
        #expect(mode == .stepUpForSigning && status.code == .authenticationFailed)
        #expect(Self.openChallenge(session)?.authenticator is PasswordStepUp)
        let signed = await send(#"{"id":5,"op":"setPassword","password":"\#(testUserPassword)","challengeMode":12}"#, &session, at: Self.t0)
        guard case let .onAuthenticateUserAndSignData(details, status)? = signed.events.first else {
            Issue.record("not signed: \(signed.line)"); return
        }
        #expect(status == .success && details.authenticatorUsed == "password")
    }
}
