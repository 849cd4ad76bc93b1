import Foundation
import Synchronization
@testable import StepSignEngine
import StepSignConfig
import StepSignEngineTestSupport
import StepSignFormat
import StepSignProtocol
import StepSignStorage
import Testing

/// The step-up reuse window (SPEC §3.4), attacked: off by default; within it, the same user at
/// a level up to the step-up's with the same type, from the same session (or peer uid), signs
/// without a challenge and the claims name the step-up's signature; it covers at most
/// `reuse_max_uses` signatures however many connections race; a password change, a block, a
/// logOff, a reload that shortens it or a device-key event end it; level 4 only if named.
@Suite("Step-up reuse")
final class StepUpReuseTests: Sendable {
    let directory: String
    let engine: Engine
    static let peer = Peer(uid: 1000, gid: 1000, pid: 42, comm: "tester", groups: [])
    static let otherPeer = Peer(uid: 1001, gid: 1001, pid: 43, comm: "other", groups: [])

    init() async throws {
        (engine, directory) = try await makeTestEngine("engine-reuse") {
            $0.stepUp = .init(reuseSeconds: 300, reuseMaxUses: 3, reuseScope: .session, reuseLevels: [1])
        }
        try await addTestUser(engine)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func send(_ text: String, _ session: inout Session, now: Date = Date()) async -> Reply {
        await engine.handle(line: Array(text.utf8), session: &session, now: now)
    }

    static func request(level: Int = 1, type: Int = 0, payload: String = "p") -> String {
        #"{"id":1,"op":"authenticateUserAndSignData","user":"alice","payload":"\#(payload)","reason":"r","authLevel":\#(level),"authenticatorType":\#(type)}"#
    }

    /// Steps up with the password and returns the signature ID.
    func stepUp(_ session: inout Session, now: Date = Date()) async throws -> String {
        let challenge = await send(Self.request(), &session, now: now)
        guard case .getPassword? = challenge.events.first else { throw Failure("no challenge: \(challenge.events)") }
        let answer = await send(#"{"id":2,"op":"setPassword","password":"\#(testUserPassword)","challengeMode":12}"#, &session, now: now)
        guard case let .onAuthenticateUserAndSignData(details, status)? = answer.events.first, status.code == .success else {
            throw Failure("not signed: \(answer.events)")
        }
        #expect(details.reusedFrom == nil)
        return details.dataSignatureID
    }

    struct Failure: Error, CustomStringConvertible { var description: String; init(_ d: String) { description = d } }

    /// The signature of a reply that signed without a challenge, or nil.
    func signedWithoutChallenge(_ reply: Reply) -> SigningDetails? {
        guard case let .onAuthenticateUserAndSignData(details, status)? = reply.events.first, status.code == .success else { return nil }
        return details
    }

    @Test("off by default: every level-1 request steps up")
    func offByDefault() async throws {
        let (plain, directory) = try await makeTestEngine("engine-reuse-off")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await addTestUser(plain)
        var session = Session(peer: Self.peer)
        for _ in 0..<2 {
            let challenge = await plain.handle(line: Array(Self.request().utf8), session: &session)
            guard case .getPassword? = challenge.events.first else { Issue.record("no step-up asked: \(challenge.events)"); return }
            let answer = await plain.handle(line: Array(#"{"id":2,"op":"setPassword","password":"\#(testUserPassword)","challengeMode":12}"#.utf8),
                                            session: &session)
            // The step-up signed: with reuse on, it would have opened a window.
            guard case let .onAuthenticateUserAndSignData(details, status)? = answer.events.first, status.code == .success else {
                Issue.record("the step-up did not sign: \(answer.events)"); return
            }
            #expect(details.reusedFrom == nil)
            let again = await plain.handle(line: Array(Self.request().utf8), session: &session)
            guard case .getPassword? = again.events.first else { Issue.record("reused with reuse off: \(again.events)"); return }
            session.pending = nil
        }
    }

    @Test("within the window the next signatures need no challenge, name the step-up's signature, and stop at reuse_max_uses")
    func reuseWithinTheWindow() async throws {
        var session = Session(peer: Self.peer)
        let first = try await stepUp(&session)
        for number in 0..<3 {
            let reply = await send(Self.request(payload: "more \(number)"), &session)
            let details = try #require(signedWithoutChallenge(reply), "use \(number): \(reply.events)")
            #expect(details.reusedFrom == first)
            let claims = try StepSignSignature.verify(details.payloadSignature, trustedKeys: engine.signing.keyring.trustedKeys)
            #expect(claims.stepUp == StepUpClaim(reusedFrom: first) && claims.authenticatorUsed == "password")
            let entry = try #require(try await engine.signing.store.ledgerEntry(signatureID: details.dataSignatureID))
            #expect(entry.jws == details.payloadSignature, "the ledger records the claim")
        }
        let fourth = await send(Self.request(payload: "one too many"), &session)
        guard case .getPassword? = fourth.events.first else { Issue.record("a 4th reuse: \(fourth.events)"); return }
    }

    @Test("a higher level, another type, another session or the window's end asks for a step-up")
    func outsideTheWindow() async throws {
        var session = Session(peer: Self.peer)
        let opened = Date()
        _ = try await stepUp(&session, now: opened)
        for request in [Self.request(level: 2), Self.request(type: 1)] {
            let reply = await send(request, &session, now: opened)
            #expect(signedWithoutChallenge(reply) == nil, "\(request): \(reply.events)")
            session.pending = nil
        }
        var other = Session(peer: Self.peer)
        #expect(signedWithoutChallenge(await send(Self.request(), &other, now: opened)) == nil)
        #expect(signedWithoutChallenge(await send(Self.request(), &session, now: opened.addingTimeInterval(300))) == nil)
    }

    @Test("an expired password ends the window: by an admin, or by age (password.max_age_days)")
    func expiryEndsIt() async throws {
        var session = Session(peer: Self.peer)
        _ = try await stepUp(&session)
        var admin = Session(peer: testAdminPeer, isAdmin: true)
        let expired = await send(#"{"id":1,"op":"admin.expirePassword","user":"alice"}"#, &admin)
        #expect(expired.error == nil)
        #expect(signedWithoutChallenge(await send(Self.request(), &session)) == nil)

        // By age: the window opened a minute before the password turns max_age_days old ends then.
        let (aging, directory) = try await makeTestEngine("engine-reuse-age") {
            $0.stepUp = .init(reuseSeconds: 3600, reuseMaxUses: 10, reuseScope: .session, reuseLevels: [1])
            $0.password.maxAgeDays = 1
        }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await addTestUser(aging)
        let created = Date()
        let t0 = created.addingTimeInterval(86_400 - 60)
        var other = Session(peer: Self.peer)
        _ = await aging.handle(line: Array(Self.request().utf8), session: &other, now: t0)
        let opened = await aging.handle(line: Array(#"{"id":2,"op":"setPassword","password":"\#(testUserPassword)","challengeMode":12}"#.utf8),
                                        session: &other, now: t0)
        #expect(signedWithoutChallenge(opened) != nil)
        #expect(signedWithoutChallenge(await aging.handle(line: Array(Self.request().utf8), session: &other, now: t0.addingTimeInterval(30))) != nil)
        let late = await aging.handle(line: Array(Self.request().utf8), session: &other, now: t0.addingTimeInterval(120))
        #expect(signedWithoutChallenge(late) == nil, "reused past the password's age")
    }

    @Test("a block by wrong answers from another connection ends the window")
    func blockEndsIt() async throws {
        var session = Session(peer: Self.peer)
        _ = try await stepUp(&session)
        var attacker = Session(peer: Self.otherPeer)
        _ = await send(Self.request(), &attacker)
        var last = Reply(events: [])
        for _ in 0..<engine.config.password.maxAttempts {
            last = await send(#"{"id":2,"op":"setPassword","password":"wrong-password-1","challengeMode":12}"#, &attacker)
        }
        guard case let .onAuthenticateUserAndSignData(_, status)? = last.events.first, status.code == .attemptsExhausted else {
            Issue.record("not blocked: \(last.events)"); return
        }
        #expect(signedWithoutChallenge(await send(Self.request(), &session)) == nil)
    }

    @Test("an event of the user recorded here (a device key enrolled or revoked) ends the window")
    func userEventEndsIt() async throws {
        var session = Session(peer: Self.peer)
        _ = try await stepUp(&session)
        _ = try await engine.recordEvent(.deviceKeyRevoked, user: "alice", details: [("deviceKeyId", .string("k"))],
                                         context: RequestContext(settings: engine.settings, now: Date(), peer: testAdminPeer))
        #expect(signedWithoutChallenge(await send(Self.request(), &session)) == nil)
    }

    @Test("logOff ends the window of its session")
    func logOffEndsIt() async throws {
        var session = Session(peer: Self.peer)
        func loggedIn(_ reply: Reply) -> Bool {
            if case .onUserLoggedIn? = reply.events.first { return true }
            return false
        }
        let login = await send(#"{"id":1,"op":"setUser","user":"alice"}"#, &session)
        #expect(login.error == nil)
        #expect(loggedIn(await send(#"{"id":2,"op":"setPassword","password":"\#(testUserPassword)","challengeMode":0}"#, &session)))
        _ = try await stepUp(&session)
        #expect(signedWithoutChallenge(await send(Self.request(), &session)) != nil)
        #expect(await send(#"{"id":3,"op":"logOff"}"#, &session).error == nil)
        _ = await send(#"{"id":4,"op":"setUser","user":"alice"}"#, &session)
        #expect(loggedIn(await send(#"{"id":5,"op":"setPassword","password":"\#(testUserPassword)","challengeMode":0}"#, &session)))
        #expect(signedWithoutChallenge(await send(Self.request(), &session)) == nil)
    }

    @Test("a reload that shortens reuse_seconds or drops the level ends the window")
    func reloadEndsIt() async throws {
        var session = Session(peer: Self.peer)
        let opened = Date()
        _ = try await stepUp(&session, now: opened)
        var shorter = engine.config
        shorter.stepUp.reuseSeconds = 10
        try await engine.reload(shorter, sha256: [UInt8](repeating: 1, count: 32), now: opened)
        #expect(signedWithoutChallenge(await send(Self.request(), &session, now: opened.addingTimeInterval(5))) != nil)
        #expect(signedWithoutChallenge(await send(Self.request(), &session, now: opened.addingTimeInterval(11))) == nil)
    }

    @Test("a reload never lengthens an open window")
    func reloadDoesNotLengthen() async throws {
        var session = Session(peer: Self.peer)
        let opened = Date()
        _ = try await stepUp(&session, now: opened)
        var longer = engine.config
        longer.stepUp.reuseSeconds = 3000
        longer.stepUp.reuseMaxUses = 100
        try await engine.reload(longer, sha256: [UInt8](repeating: 2, count: 32), now: opened)
        #expect(signedWithoutChallenge(await send(Self.request(), &session, now: opened.addingTimeInterval(301))) == nil)
    }

    @Test("level 4 is reused only when reuse_levels names it; level 2 not when only 1 is named")
    func levelsNotNamed() async throws {
        let settings = StepSignConfiguration.StepUp(reuseSeconds: 300, reuseMaxUses: 3, reuseScope: .session, reuseLevels: [1])
        #expect(!settings.reusable(level: 4) && !settings.reusable(level: 2) && settings.reusable(level: 1))
        let windows = StepUpReuseWindows()
        let now = Date()
        let token = try CredentialToken.random()
        windows.open(.init(level: 4, type: 1, authenticatorUsed: "idv-biometric", signatureID: "s", credentialToken: token,
                           openedAt: now, seconds: 300, maxUses: 3), user: "alice", scope: .session(1), settings: settings)
        #expect(windows.take(user: "alice", level: 4, type: 1, scope: .session(1), credentialToken: token, now: now,
                             settings: settings) == nil)
        var named = settings
        named.reuseLevels = [1, 4]
        windows.open(.init(level: 4, type: 1, authenticatorUsed: "idv-biometric", signatureID: "s", credentialToken: token,
                           openedAt: now, seconds: 300, maxUses: 3), user: "alice", scope: .session(1), settings: named)
        #expect(windows.take(user: "alice", level: 4, type: 1, scope: .session(1), credentialToken: token, now: now,
                             settings: named)?.signatureID == "s")
    }

    @Test("40 connections of one peer race for a window of 3 uses: 3 signatures without a challenge, never more")
    func raced() async throws {
        let (racing, directory) = try await makeTestEngine("engine-reuse-race") {
            $0.stepUp = .init(reuseSeconds: 300, reuseMaxUses: 3, reuseScope: .peer, reuseLevels: [1])
        }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await addTestUser(racing)
        var session = Session(peer: Self.peer)
        _ = await racing.handle(line: Array(Self.request().utf8), session: &session)
        let opened = await racing.handle(line: Array(#"{"id":2,"op":"setPassword","password":"\#(testUserPassword)","challengeMode":12}"#.utf8),
                                         session: &session)
        #expect(signedWithoutChallenge(opened)?.reusedFrom == nil && signedWithoutChallenge(opened) != nil, "the step-up signed: \(opened.events)")
        let reused = try await withThrowingTaskGroup(of: Bool.self) { group in
            for number in 0..<40 {
                group.addTask {
                    var connection = Session(peer: Self.peer)
                    let reply = await racing.handle(line: Array(Self.request(payload: "race \(number)").utf8), session: &connection)
                    if case let .onAuthenticateUserAndSignData(_, status)? = reply.events.first { return status.code == .success }
                    return false
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(reused == 3)
        // Another uid has no window.
        var stranger = Session(peer: Self.otherPeer)
        let other = await racing.handle(line: Array(Self.request().utf8), session: &stranger)
        guard case .getPassword? = other.events.first else { Issue.record("another uid reused: \(other.events)"); return }
    }
}
