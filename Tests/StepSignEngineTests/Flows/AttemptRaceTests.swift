import Foundation
import StepSignProtocol
import Logging
@testable import StepSignEngine
import StepSignConfig
import StepSignCrypto
import StepSignStorage
import StepSignEngineTestSupport
import Testing

/// SPEC §5.1 against the engine, many sessions answering at once: every answer takes its
/// attempt from the store before it is checked, so a burst gets `max_attempts` checks, not one
/// per answer, and a right answer after the budget is taken never signs or logs in.
@Suite("Attempt limits under concurrency")
final class AttemptRaceTests: Sendable {
    static let password = "Tr1cky-Pelican-42"
    let directory: String
    let engine: Engine

    init() async throws {
        (engine, directory) = try await makeTestEngine("engine-race") { $0.password.maxChecksPerUID = 1024 }
        var admin = Session(peer: Self.peer(0), isAdmin: true)
        let added = await engine.handle(line: Array(#"{"id":1,"op":"admin.addUser","user":"alice","password":"\#(Self.password)"}"#.utf8),
                                        session: &admin)
        #expect(added.error == nil)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    static func peer(_ uid: UInt32) -> Peer { Peer(uid: uid, gid: uid, pid: 42, comm: "tester", groups: []) }

    func send(_ text: String, _ session: inout Session) async -> Reply {
        await engine.handle(line: Array(text.utf8), session: &session)
    }

    /// `count` sessions, each with `open` sent.
    func sessions(_ count: Int, open: String) async -> [Session] {
        var out: [Session] = []
        for _ in 0..<count {
            var session = Session(peer: Self.peer(1000), isAdmin: false)
            let reply = await send(open, &session)
            #expect(reply.error == nil, "\(reply.line)")
            out.append(session)
        }
        return out
    }

    /// Sends `answer(index)` on every session at once; the replies in session order.
    func answerAll(_ sessions: [Session], _ answer: @escaping @Sendable (Int) -> String) async -> [Reply] {
        await withTaskGroup(of: (Int, Reply).self) { group in
            for (index, session) in sessions.enumerated() {
                group.addTask {
                    var session = session
                    return (index, await self.send(answer(index), &session))
                }
            }
            var replies = [Reply?](repeating: nil, count: sessions.count)
            for await (index, reply) in group { replies[index] = reply }
            return replies.map { $0! }
        }
    }

    static func statusCodes(_ replies: [Reply]) -> [Int] {
        replies.compactMap { reply in
            guard case let .object(members)? = reply.events.first?.json,
                  case let .object(status)? = members.first(where: { $0.0 == "status" })?.1,
                  case let .int(code)? = status.first(where: { $0.0 == "code" })?.1
            else { return nil }
            return Int(code)
        }.sorted()
    }

    static let signingOpen = #"{"id":1,"op":"authenticateUserAndSignData","user":"USER","payload":"Pay 1,000,000 EUR to mallory","reason":"r","authLevel":1,"authenticatorType":0}"#

    @Test("mode 12: of 39 wrong answers at once 3 are checked, and the right one sent after them does not sign",
          arguments: ["alice", "nobody"])
    func signingPasswordBurst(user: String) async throws {
        let open = Self.signingOpen.replacingOccurrences(of: "USER", with: user)
        var all = await sessions(40, open: open)
        let last = all.removeLast()
        let before = engine.credentials.passwords.checks.startedCount
        let replies = await answerAll(all) { _ in #"{"id":2,"op":"setPassword","password":"Wrong-Guess-71","challengeMode":12}"# }
        #expect(engine.credentials.passwords.checks.startedCount - before == 3)
        #expect(Self.statusCodes(replies) == [102, 102] + [Int](repeating: 153, count: 37))

        var session = last
        let right = await send(#"{"id":3,"op":"setPassword","password":"\#(Self.password)","challengeMode":12}"#, &session)
        #expect(Self.statusCodes([right]) == [153])
        #expect(engine.credentials.passwords.checks.startedCount - before == 3, "the right answer after the budget is not checked")
        #expect(try await engine.signing.store.ledgerSignatureCount() == 0)
        #expect(try await engine.credentials.store.attemptCounter(name: user, now: Date()).blocked)
    }

    @Test("mode 12: 40 answers at once, one of them right: at most 3 wrong ones are checked before a success")
    func signingPasswordBurstWithTheRightOneInside() async throws {
        let all = await sessions(40, open: Self.signingOpen.replacingOccurrences(of: "USER", with: "alice"))
        let before = engine.credentials.passwords.checks.startedCount
        let replies = await answerAll(all) { index in
            #"{"id":2,"op":"setPassword","password":"\#(index == 20 ? Self.password : "Wrong-Guess-71")","challengeMode":12}"#
        }
        let checked = engine.credentials.passwords.checks.startedCount - before
        let signed = Self.statusCodes(replies).filter { $0 == 100 }.count
        // 3 checks, or, if the right answer won one of them, its success opened 3 more.
        #expect(checked == 3 || (signed == 1 && checked <= 6), "checked \(checked), signed \(signed)")
        #expect(try await engine.signing.store.ledgerSignatureCount() == Int64(signed))
    }

    @Test("mode 0: of 59 wrong logins at once 3 are checked, and the right one after them does not log in")
    func loginBurst() async throws {
        var all = await sessions(60, open: #"{"id":1,"op":"setUser","user":"alice"}"#)
        let last = all.removeLast()
        let before = engine.credentials.passwords.checks.startedCount
        _ = await answerAll(all) { _ in #"{"id":2,"op":"setPassword","password":"Wrong-Guess-71","challengeMode":0}"# }
        #expect(engine.credentials.passwords.checks.startedCount - before == 3)
        var session = last
        let right = await send(#"{"id":3,"op":"setPassword","password":"\#(Self.password)","challengeMode":0}"#, &session)
        #expect(right.error?.code == .userBlocked)
        #expect(!right.events.contains { if case .onUserLoggedIn = $0 { true } else { false } })
        #expect(engine.credentials.passwords.checks.startedCount - before == 3)
    }

    @Test("device key: of 39 wrong signatures at once 3 take an attempt, and the right one after them signs nothing")
    func deviceKeyBurst() async throws {
        let device = try P256PrivateKey.generate()
        var admin = Session(peer: Self.peer(0), isAdmin: true)
        let pem = device.publicKey.spkiPEM.replacingOccurrences(of: "\n", with: "\\n")
        let enrolled = await send(#"{"id":1,"op":"admin.enrollDeviceKey","user":"alice","publicKey":"\#(pem)","label":"phone"}"#, &admin)
        #expect(enrolled.error == nil, "\(enrolled.line)")
        var all = await sessions(40, open: Self.signingOpen.replacingOccurrences(of: "USER", with: "alice"))
        let last = all.removeLast()
        let kid = device.publicKey.thumbprint
        let bogus = Base64URL.encode([UInt8](repeating: 7, count: 64))
        let replies = await answerAll(all) { _ in
            #"{"id":2,"op":"setLDASignature","deviceKeyId":"\#(kid)","signature":"\#(bogus)"}"#
        }
        #expect(Self.statusCodes(replies) == [102, 102] + [Int](repeating: 153, count: 37))
        guard case let .signing(challenge)? = last.pending, let open = (challenge.authenticator as? DeviceKeyStepUp)?.challenge else {
            Issue.record("no device challenge open"); return
        }
        var session = last
        let right = Base64URL.encode(try device.signatureES256(for: open.bytes))
        let reply = await send(#"{"id":3,"op":"setLDASignature","deviceKeyId":"\#(kid)","signature":"\#(right)"}"#, &session)
        #expect(Self.statusCodes([reply]) == [153])
        #expect(try await engine.signing.store.ledgerSignatureCount() == 0)
    }

    @Test("device key: a right signature is used once; replayed on the same challenge it signs nothing more")
    func deviceNonceIsUsedOnce() async throws {
        let device = try P256PrivateKey.generate()
        var admin = Session(peer: Self.peer(0), isAdmin: true)
        let pem = device.publicKey.spkiPEM.replacingOccurrences(of: "\n", with: "\\n")
        _ = await send(#"{"id":1,"op":"admin.enrollDeviceKey","user":"alice","publicKey":"\#(pem)","label":"phone"}"#, &admin)
        let opened = await sessions(1, open: Self.signingOpen.replacingOccurrences(of: "USER", with: "alice"))
        guard case let .signing(challenge)? = opened[0].pending, let open = (challenge.authenticator as? DeviceKeyStepUp)?.challenge else {
            Issue.record("no device challenge open"); return
        }
        let kid = device.publicKey.thumbprint
        let right = Base64URL.encode(try device.signatureES256(for: open.bytes))
        // Two copies of the session with the same open challenge answer at once: one signs.
        let replies = await answerAll([opened[0], opened[0]]) { _ in
            #"{"id":3,"op":"setLDASignature","deviceKeyId":"\#(kid)","signature":"\#(right)"}"#
        }
        #expect(Self.statusCodes(replies) == [100, 102])
        #expect(try await engine.signing.store.ledgerSignatureCount() == 1)
    }

    @Test("activation code: an answer that finds no attempt left gets 153 and leaves the code to the answers holding the attempts")
    func activationCodeLeftToTheHolders() async throws {
        var session = Session(peer: Self.peer(1000), isAdmin: false)
        _ = await send(#"{"id":1,"op":"setUser","user":"alice"}"#, &session)
        let sent = await send(#"{"id":2,"op":"forgotPassword","user":"alice"}"#, &session)
        #expect(sent.error == nil, "\(sent.line)")
        // Three answers elsewhere (another session or daemon) hold the budget's attempts.
        let maxAttempts = engine.config.forgotPassword.maxAttempts
        for _ in 0..<maxAttempts {
            _ = try await engine.credentials.store.reserveActivationAttempt(name: "alice", maxAttempts: maxAttempts, now: Date())
        }
        let late = await send(#"{"id":3,"op":"setActivationCode","activationCode":"00000000"}"#, &session)
        #expect(Self.statusCodes([late]) == [153])
        #expect(try await engine.credentials.store.activationCode(user: "alice") != nil, "one of the holders may be right")
    }

    @Test("a peer uid with max_checks_per_uid checks queued gets error 14 for more, costing no attempt")
    func checksPerUIDAreCapped() async throws {
        var config = engine.config
        config.password.maxChecksPerUID = 2
        config.password.scryptN = 16384
        try await engine.reload(config, sha256: [])
        let all = await sessions(8, open: Self.signingOpen.replacingOccurrences(of: "USER", with: "alice"))
        let replies = await answerAll(all) { _ in #"{"id":2,"op":"setPassword","password":"Wrong-Guess-71","challengeMode":12}"# }
        let busy = replies.filter { $0.error?.code == .busy }.count
        #expect(busy >= 1, "\(replies.map(\.line))")
        #expect(replies.count - busy <= 3)
        let counter = try await engine.credentials.store.attemptCounter(name: "alice", now: Date())
        #expect(counter.failedAttempts == replies.count - busy, "a refused answer took no attempt")
    }
}

/// SPEC §5.1: a name that is not a user costs what a user costs, also after `scrypt_n` changed.
@Suite("Dummy cost and rehash")
struct DummyCostTests {
    @Test("after raising scrypt_n, the dummy keeps the stored hashes' cost, and a login rehashes at the new one")
    func dummyFollowsStoredHashesAndLoginRehashes() async throws {
        let first = try await AttemptRaceTests()
        let old = try PasswordHash.parameters(of: try #require(try await first.engine.credentials.store.user(named: "alice")).passwordHash)
        // The daemon restarts with a higher cost on the same store.
        var config = first.engine.config
        config.password.scryptN = 2048
        let engine = try Engine(configuration: config, store: try #require(first.engine.credentials.store as? any StepSignStore), keyring: first.engine.signing.keyring,
                                logger: TestLog.logger())
        #expect(engine.credentials.passwords.storedDummyParameters == config.password.scryptParameters)
        func send(_ text: String, _ session: inout Session) async -> Reply {
            await engine.handle(line: Array(text.utf8), session: &session)
        }
        // An unknown name's answer is checked; the dummy is matched to the store in the background.
        var session = Session(peer: AttemptRaceTests.peer(1000), isAdmin: false)
        _ = await send(#"{"id":1,"op":"setUser","user":"nobody"}"#, &session)
        _ = await send(#"{"id":2,"op":"setPassword","password":"x","challengeMode":0}"#, &session)
        var waited = 0
        while engine.credentials.passwords.storedDummyParameters != old || engine.credentials.passwords.isRefreshingDummy, waited < 500 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        #expect(engine.credentials.passwords.storedDummyParameters == old, "the dummy costs what alice's stored hash costs")

        var login = Session(peer: AttemptRaceTests.peer(1000), isAdmin: false)
        _ = await send(#"{"id":1,"op":"setUser","user":"alice"}"#, &login)
        let reply = await send(#"{"id":2,"op":"setPassword","password":"\#(AttemptRaceTests.password)","challengeMode":0}"#, &login)
        #expect(reply.events.contains { if case .onUserLoggedIn = $0 { true } else { false } })
        let stored = try #require(try await engine.credentials.store.user(named: "alice")).passwordHash
        #expect(try PasswordHash.parameters(of: stored) == config.password.scryptParameters)
        #expect(try PasswordHash.verify(password: AttemptRaceTests.password, encoded: stored))
    }
}
