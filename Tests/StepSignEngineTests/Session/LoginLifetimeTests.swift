import Foundation
import StepSignProtocol
@testable import StepSignEngine
import StepSignConfig
import StepSignCrypto
@testable import StepSignStorage
import StepSignEngineTestSupport
import Testing

/// How long a login lasts, with the clock in the test's hand (SPEC §3, §6):
/// `server.session_max_seconds` after the login it ends whatever its activity, and
/// self-service `enrollDeviceKey` needs a login younger than `lda.enroll_fresh_seconds`.
@Suite("Login lifetime")
final class LoginLifetimeTests: Sendable {
    static let password = "Tr1cky-Pelican-42"
    static let start = Date(timeIntervalSince1970: 1_750_000_000)
    let directory: String
    let engine: Engine

    init() async throws {
        (engine, directory) = try await makeTestEngine("engine-login-lifetime")
        var admin = Session(peer: testAdminPeer, isAdmin: true)
        let added = await send(#"{"id":1,"op":"admin.addUser","user":"alice","password":"\#(Self.password)"}"#, &admin)
        #expect(added.error == nil, "\(added.text)")
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    static let peer = Peer(uid: 1000, gid: 1000, pid: 42, comm: "tester", groups: [])

    func send(_ text: String, _ session: inout Session, at now: Date = LoginLifetimeTests.start) async -> Reply {
        await engine.handle(line: Array(text.utf8), session: &session, now: now)
    }

    /// A session logged in as alice at `start + offset`.
    func loggedIn(after offset: TimeInterval = 0) async throws -> Session {
        var session = Session(peer: Self.peer, isAdmin: false)
        let at = Self.start.addingTimeInterval(offset)
        _ = await send(#"{"id":1,"op":"setUser","user":"alice"}"#, &session, at: at)
        let reply = await send(#"{"id":2,"op":"setPassword","password":"\#(Self.password)","challengeMode":0}"#, &session, at: at)
        try #require(reply.events.first?.name == "onUserLoggedIn", "\(reply.text)")
        return session
    }

    static func enroll() throws -> String {
        let pem = try P256PrivateKey.generate().publicKey.spkiPEM
        let escaped = pem.replacingOccurrences(of: "\n", with: "\\n")
        return #"{"id":3,"op":"enrollDeviceKey","publicKey":"\#(escaped)","label":"phone"}"#
    }

    static let getAllChallenges = #"{"id":4,"op":"getAllChallenges"}"#
    static let signAsLoggedIn = #"{"id":5,"op":"authenticateUserAndSignData","payload":"p","reason":"r","authLevel":1,"authenticatorType":0}"#

    @Test("session_max_seconds (default 28800) after the login, however busy, the next request that needs it is error 5")
    func maxAge() async throws {
        var session = try await loggedIn()
        // Activity does not extend a login.
        for hour in 0..<8 {
            let reply = await send(Self.getAllChallenges, &session, at: Self.start.addingTimeInterval(Double(hour) * 3600 + 3599))
            #expect(reply.error == nil, "\(reply.text)")
        }
        let ended = await send(Self.getAllChallenges, &session, at: Self.start.addingTimeInterval(28800))
        #expect(ended.error?.code == .sessionExpired, "\(ended.text)")
        #expect(ended.events.isEmpty)
        let after = await send(Self.getAllChallenges, &session, at: Self.start.addingTimeInterval(28801))
        #expect(after.error?.code == .wrongState, "the login is gone: \(after.text)")
    }

    @Test("signing as the logged-in user after session_max_seconds is error 5 and opens no challenge")
    func maxAgeSigning() async throws {
        var session = try await loggedIn()
        let ended = await send(Self.signAsLoggedIn, &session, at: Self.start.addingTimeInterval(28800))
        #expect(ended.error?.code == .sessionExpired, "\(ended.text)")
        #expect(session.pending == nil)
    }

    @Test("enrollDeviceKey within enroll_fresh_seconds (default 300) of the login works; later it is error 11 and the login stays")
    func enrollFreshness() async throws {
        var session = try await loggedIn(after: 1000)
        let fresh = await send(try Self.enroll(), &session, at: Self.start.addingTimeInterval(1300))
        #expect(fresh.error == nil, "\(fresh.text)")
        let stale = await send(try Self.enroll(), &session, at: Self.start.addingTimeInterval(1301))
        #expect(stale.error?.code == .wrongState, "\(stale.text)")
        #expect(stale.error?.message.contains("log in again") == true, "\(stale.text)")
        let still = await send(Self.getAllChallenges, &session, at: Self.start.addingTimeInterval(1301))
        #expect(still.error == nil, "a stale login is still a login: \(still.text)")
        let keys = try await engine.credentials.store.deviceKeys(user: "alice", includeRevoked: true)
        #expect(keys.count == 1)
    }

    @Test("a fresh login makes enrolment possible again")
    func enrollAfterLoggingInAgain() async throws {
        var session = try await loggedIn()
        #expect(await send(try Self.enroll(), &session, at: Self.start.addingTimeInterval(600)).error?.code == .wrongState)
        #expect(await send(#"{"id":6,"op":"logOff"}"#, &session, at: Self.start.addingTimeInterval(600)).error == nil)
        var again = try await loggedIn(after: 600)
        #expect(await send(try Self.enroll(), &again, at: Self.start.addingTimeInterval(700)).error == nil)
    }

    @Test("a user blocked in the store behind the daemon's back: enrollDeviceKey is error 148, enrols nothing")
    func enrollBlocked() async throws {
        var session = try await loggedIn()
        let store = try #require(engine.credentials.store as? SQLiteStore)
        // Not through the attempt counter (a block there would end the login): only the blocked flag.
        try await store.executeRawSQL("UPDATE users SET blocked = 1, failed_attempts = 3 WHERE name = 'alice'")
        let reply = await send(try Self.enroll(), &session, at: Self.start.addingTimeInterval(10))
        #expect(reply.error?.code == .userBlocked, "\(reply.text)")
        #expect(try await engine.credentials.store.deviceKeys(user: "alice", includeRevoked: true).isEmpty)
    }

    @Test("three wrong step-up answers in another session end this login (error 5), and an unlock does not bring it back")
    func blockedElsewhere() async throws {
        var session = try await loggedIn()
        var other = Session(peer: Self.peer, isAdmin: false)
        _ = await send(#"{"id":1,"op":"authenticateUserAndSignData","user":"alice","payload":"p","reason":"r","authLevel":1,"authenticatorType":0}"#, &other)
        for _ in 0..<3 {
            _ = await send(#"{"id":2,"op":"setPassword","password":"Wrong-Guess-71","challengeMode":12}"#, &other)
        }
        var admin = Session(peer: testAdminPeer, isAdmin: true)
        #expect(await send(#"{"id":3,"op":"admin.unlockUser","user":"alice"}"#, &admin).error == nil)
        let reply = await send(Self.getAllChallenges, &session, at: Self.start.addingTimeInterval(1))
        #expect(reply.error?.code == .sessionExpired, "\(reply.text)")
    }

    @Test("a right step-up password of the logged-in user keeps the login")
    func rightStepUpKeepsTheLogin() async throws {
        var session = try await loggedIn()
        #expect(await send(Self.signAsLoggedIn, &session).events.first?.name == "getPassword")
        let signed = await send(#"{"id":6,"op":"setPassword","password":"\#(Self.password)","challengeMode":12}"#, &session)
        #expect(signed.error == nil, "\(signed.text)")
        #expect(await send(Self.getAllChallenges, &session, at: Self.start.addingTimeInterval(1)).error == nil)
    }
}

extension Reply {
    /// The reply line as text, for failure messages.
    var text: String { String(decoding: line, as: UTF8.self) }
}

extension Event {
    /// The `event` member: the callback's name.
    var name: String? {
        guard case let .object(members) = json, case let .string(name)? = members.first(where: { $0.0 == "event" })?.1
        else { return nil }
        return name
    }
}
