import Foundation
@testable import StepSignEngine
import StepSignConfig
import StepSignCrypto
import StepSignEngineTestSupport
import StepSignFormat
import StepSignProtocol
import Testing

/// The SSH agent's unlock window (SPEC §3.5) at the engine, with time injected: `unlockAgent`
/// always steps up (never a reuse window, never level 0), and the agent then signs SSHSIG data
/// of a configured namespace for that uid only, for at most `unlock_seconds` and `max_uses`.
@Suite("SSH agent unlock")
final class SSHAgentUnlockTests: Sendable {
    let directory: String
    let engine: Engine
    static let peer = Peer(uid: 1000, gid: 1000, pid: 42, comm: "ssh-keygen", groups: [])
    static let otherPeer = Peer(uid: 1001, gid: 1001, pid: 43, comm: "ssh-keygen", groups: [])
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    init() async throws {
        (engine, directory) = try await makeTestEngine("engine-agent") {
            $0.sshAgent = .init(socket: "/run/stepsign/agent.sock", unlockSeconds: 600, maxUses: 3)
            $0.stepUp = .init(reuseSeconds: 300, reuseMaxUses: 10, reuseScope: .peer, reuseLevels: [1])
        }
        try await addTestUser(engine)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func send(_ text: String, _ session: inout Session, now: Date = start) async -> Reply {
        await engine.handle(line: Array(text.utf8), session: &session, now: now)
    }

    /// `unlockAgent` for alice answered with her password; the reply to the answer.
    func unlock(_ session: inout Session, extra: String = "", now: Date = start) async throws -> Reply {
        let challenge = await send(#"{"id":1,"op":"unlockAgent","user":"alice","authLevel":1\#(extra)}"#, &session, now: now)
        guard case .getPassword? = challenge.events.first else { throw Failure("no step-up asked: \(challenge.error as Any) \(challenge.events)") }
        return await send(#"{"id":2,"op":"setPassword","password":"\#(testUserPassword)","challengeMode":12}"#, &session, now: now)
    }

    struct Failure: Error, CustomStringConvertible { var description: String; init(_ d: String) { description = d } }

    static func sshsig(_ namespace: String = "git") -> [UInt8] {
        SSHSignedData(namespace: namespace, hashAlgorithm: "sha512", hash: [UInt8](repeating: 7, count: 64)).bytes
    }

    func sign(_ data: [UInt8] = sshsig(), peer: Peer = peer, at seconds: Double) async -> [UInt8]? {
        await engine.sshAgentSign(keyBlob: engine.sshAgentIdentities()[0].blob, data: data, peer: peer,
                                  now: Self.start.addingTimeInterval(seconds))
    }

    @Test("the agent signs only after an unlock, only for its uid, and the signature verifies with the listed key")
    func signsAfterUnlockForItsUID() async throws {
        #expect(await sign(at: 1) == nil)
        var session = Session(peer: Self.peer)
        let reply = try await unlock(&session)
        guard case let .onAuthenticateUserAndSignData(details, status)? = reply.events.first, status.code == .success else {
            Issue.record("not unlocked: \(reply.events)"); return
        }
        #expect(details.dataPayload.contains("uid 1000") && details.reason.hasPrefix("stepsign unlock"))
        #expect(await sign(peer: Self.otherPeer, at: 1) == nil)
        let signature = try #require(await sign(at: 1))
        var reader = SSHWireReader(signature)
        #expect(reader.string() == Array("ecdsa-sha2-nistp256".utf8))
        var inner = SSHWireReader(reader.string() ?? [])
        func fixed(_ mpint: [UInt8]?) -> [UInt8] {
            let magnitude = Array((mpint ?? []).drop(while: { $0 == 0 }))
            return [UInt8](repeating: 0, count: max(0, 32 - magnitude.count)) + magnitude
        }
        let rs = fixed(inner.string()) + fixed(inner.string())
        #expect(engine.signing.keyring.signer.key.publicKey.isValidSignatureES256(rs, for: Self.sshsig()))
        let identity = engine.sshAgentIdentities()[0]
        #expect(identity.comment == engine.signing.keyring.signer.kid)
        #expect(identity.blob == SSHPublicKey.blob(engine.signing.keyring.signer.key.publicKey))
    }

    @Test("a window ends after unlock_seconds (or the shorter --for) and after max_uses signatures")
    func windowEndsByTimeAndUses() async throws {
        var session = Session(peer: Self.peer)
        _ = try await unlock(&session)
        #expect(await sign(at: 599) != nil)
        #expect(await sign(at: 600) == nil)
        _ = try await unlock(&session, extra: #","seconds":30"#)
        #expect(await sign(at: 29) != nil)
        #expect(await sign(at: 30) == nil)
        _ = try await unlock(&session)
        for _ in 0..<3 { #expect(await sign(at: 1) != nil) }
        #expect(await sign(at: 1) == nil)
    }

    @Test("foreign namespaces and data that is not SSHSIG are refused inside a window; lockAgent ends it")
    func refusals() async throws {
        var session = Session(peer: Self.peer)
        _ = try await unlock(&session)
        #expect(await sign(Self.sshsig("other"), at: 1) == nil)
        #expect(await sign([0, 0, 0, 4, 1, 2, 3, 4, 50], at: 1) == nil)
        #expect(await sign(Self.sshsig("file"), at: 1) != nil)
        let locked = await send(#"{"id":3,"op":"lockAgent"}"#, &session)
        #expect(locked.result?["locked"] == .bool(true))
        #expect(await sign(at: 1) == nil)
    }

    @Test("an unlock always steps up: never level 0, never through a [stepup] reuse window, never past unlock_seconds")
    func unlockAlwaysStepsUp() async throws {
        var session = Session(peer: Self.peer)
        // A signature opens a reuse window for this peer uid…
        _ = await send(#"{"id":1,"op":"authenticateUserAndSignData","user":"alice","payload":"p","reason":"r","authLevel":1,"authenticatorType":0}"#, &session)
        _ = await send(#"{"id":2,"op":"setPassword","password":"\#(testUserPassword)","challengeMode":12}"#, &session)
        // …which the unlock does not use: it asks for the password (unlock throws otherwise).
        _ = try await unlock(&session)
        let level0 = await send(#"{"id":1,"op":"unlockAgent","user":"alice","authLevel":0}"#, &session)
        #expect(level0.error?.code == .unsupportedAuthCombination)
        let tooLong = await send(#"{"id":1,"op":"unlockAgent","user":"alice","authLevel":1,"seconds":601}"#, &session)
        #expect(tooLong.error?.code == .invalidArguments)
    }

    @Test("without [ssh_agent] socket, unlockAgent is 170")
    func offWithoutSocket() async throws {
        let (plain, directory) = try await makeTestEngine("engine-agent-off")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var session = Session(peer: Self.peer)
        let reply = await plain.handle(line: Array(#"{"id":1,"op":"unlockAgent","user":"alice","authLevel":1}"#.utf8), session: &session)
        #expect(reply.error?.code == .notSupported)
    }

    @Test("allow_authentication signs data that is not SSHSIG, as namespace ssh-userauth")
    func allowAuthentication() async throws {
        var config = engine.config
        config.sshAgent.allowAuthentication = true
        try await engine.reload(config, sha256: [UInt8](repeating: 0, count: 32))
        var session = Session(peer: Self.peer)
        _ = try await unlock(&session)
        #expect(await sign([0, 0, 0, 4, 1, 2, 3, 4, 50], at: 1) != nil)
        #expect(await sign(Self.sshsig("other"), at: 1) == nil)
    }

    @Test("a reload that lowers max_uses or unlock_seconds applies to an open window")
    func reloadShortensAWindow() async throws {
        var session = Session(peer: Self.peer)
        _ = try await unlock(&session)
        #expect(await sign(at: 1) != nil)
        var config = engine.config
        config.sshAgent.maxUses = 1
        try await engine.reload(config, sha256: [UInt8](repeating: 0, count: 32))
        #expect(await sign(at: 2) == nil)
        config.sshAgent.maxUses = 3
        config.sshAgent.unlockSeconds = 60
        try await engine.reload(config, sha256: [UInt8](repeating: 0, count: 32))
        _ = try await unlock(&session)
        #expect(await sign(at: 59) != nil)
        #expect(await sign(at: 60) == nil)
    }
}
