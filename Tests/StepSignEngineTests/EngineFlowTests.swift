import Foundation
import StepSignProtocol
import Logging
@testable import StepSignEngine
import StepSignConfig
import StepSignCrypto
import StepSignFormat
import StepSignStorage
import StepSignEngineTestSupport
import Testing

/// The engine's flows without a socket: a real SQLite store and keyring in a temp directory.
@Suite("Engine flows")
final class EngineFlowTests: Sendable {
    let directory: String
    let engine: Engine
    let peer = Peer(uid: 1000, gid: 1000, pid: 42, comm: "tester", groups: [])

    init() async throws {
        (engine, directory) = try await makeTestEngine("engine") { $0.signing.allowLevel0 = true }
        var admin = Session(peer: testAdminPeer, isAdmin: true)
        let added = await engine.handle(line: Array(#"{"id":1,"op":"admin.addUser","user":"alice","password":"Tr1cky-Pelican-42"}"#.utf8), session: &admin)
        #expect(added.error == nil)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func send(_ text: String, _ session: inout Session) async -> Reply {
        await engine.handle(line: Array(text.utf8), session: &session)
    }

    @Test("a level-1 request opens a mode-12 password challenge and the right answer signs")
    func passwordStepUpSigns() async throws {
        var session = Session(peer: peer, isAdmin: false)
        let challenge = await send(#"{"id":1,"op":"authenticateUserAndSignData","user":"alice","payload":"p","reason":"r","authLevel":1,"authenticatorType":0}"#, &session)
        guard case let .getPassword(user, mode, attempts, status, _, _)? = challenge.events.first else {
            Issue.record("no getPassword: \(challenge.events)"); return
        }
        #expect(user == "alice" && mode == .stepUpForSigning && attempts == 3 && status.code == .success)
        let answer = await send(#"{"id":2,"op":"setPassword","password":"Tr1cky-Pelican-42","challengeMode":12}"#, &session)
        guard case let .onAuthenticateUserAndSignData(details, status)? = answer.events.first else {
            Issue.record("not signed: \(answer.events)"); return
        }
        #expect(status.code == .success)
        let claims = try StepSignSignature.verify(details.payloadSignature, trustedKeys: engine.signing.keyring.trustedKeys)
        #expect(claims.sub == "alice" && claims.authenticatorUsed == "password")
        #expect(session.signatureIDs.count == 1 && session.signatureIDs.contains(details.dataSignatureID))
        #expect(session.pending == nil)
    }

    @Test("a refused request changes no state: the open challenge is still open")
    func refusedRequestKeepsState() async {
        var session = Session(peer: peer, isAdmin: false)
        _ = await send(#"{"id":1,"op":"authenticateUserAndSignData","user":"alice","payload":"p","reason":"r","authLevel":1,"authenticatorType":0}"#, &session)
        let wrongMode = await send(#"{"id":2,"op":"setPassword","password":"x","challengeMode":0}"#, &session)
        #expect(wrongMode.error?.code == .wrongState)
        let right = await send(#"{"id":3,"op":"setPassword","password":"Tr1cky-Pelican-42","challengeMode":12}"#, &session)
        #expect(right.error == nil)
    }

    @Test("admin operations need an admin session")
    func adminNeedsAdmin() async {
        var session = Session(peer: peer, isAdmin: false)
        let reply = await send(#"{"id":1,"op":"admin.listUsers"}"#, &session)
        #expect(reply.error?.code == .permissionDenied)
    }

    @Test("signatures are numbered in the ledger in the order they were made")
    func ledgerOrder() async throws {
        var session = Session(peer: testAdminPeer, isAdmin: true)
        for index in 1...5 {
            let reply = await send(#"{"id":\#(index),"op":"authenticateUserAndSignData","user":"bob","payload":"p\#(index)","reason":"r","authLevel":0,"authenticatorType":0}"#, &session)
            #expect(reply.error == nil)
        }
        let audit = await send(#"{"id":9,"op":"admin.auditVerify"}"#, &session)
        #expect(audit.result?["ok"] == .bool(true))
        #expect(audit.result?["entries"] == .int(try await engine.signing.store.ledgerCount()))
        #expect(try await engine.signing.store.ledgerSignatureCount() == 5)
    }

    @Test("concurrent signings share commits and every one gets its own sequence number")
    func concurrentSignings() async throws {
        let results = await withTaskGroup(of: Int64?.self) { group in
            for index in 0..<64 {
                group.addTask {
                    var session = Session(peer: self.peer, isAdmin: false)
                    let reply = await self.send(#"{"id":1,"op":"authenticateUserAndSignData","user":"u","payload":"p\#(index)","reason":"r","authLevel":0,"authenticatorType":0}"#, &session)
                    guard case let .onAuthenticateUserAndSignData(details, _)? = reply.events.first else { return nil }
                    return try? await self.engine.signing.store.ledgerEntry(signatureID: details.dataSignatureID)?.seq
                }
            }
            return await group.reduce(into: [Int64?]()) { $0.append($1) }
        }
        let seqs = results.compactMap { $0 }
        #expect(seqs.count == 64 && Set(seqs).count == 64)
        #expect(Set(seqs).isSubset(of: Set(1...(try await engine.signing.store.ledgerCount()))))
    }
}
