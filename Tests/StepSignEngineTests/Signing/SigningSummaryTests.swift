import Foundation
@testable import StepSignEngine
import StepSignFormat
import StepSignEngineTestSupport
import Testing

/// The audit lines of signing (issue 15): a signature behind a step-up keeps a `notice` line
/// of its own; level 0 logs its line at `debug` and is counted into one `info` line per minute
/// by peer (uid and comm). The clock is the test's.
@Suite("Signing summary")
final class SigningSummaryTests: Sendable {
    static let start = Date(timeIntervalSince1970: 1_750_000_000)
    let log = CapturedLog()
    let directory: String
    let engine: Engine

    init() async throws {
        (engine, directory) = try await makeTestEngine("engine-signing-summary", logger: log.logger()) { config in
            config.signing.allowLevel0 = true
        }
        var admin = Session(peer: testAdminPeer, isAdmin: true)
        let added = await engine.handle(line: Array(#"{"id":1,"op":"admin.addUser","user":"alice","password":"Tr1cky-Pelican-42"}"#.utf8),
                                        session: &admin, now: Self.start)
        #expect(added.error == nil, "\(added.text)")
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    static func peer(_ uid: UInt32, _ comm: String) -> Peer {
        Peer(uid: uid, gid: uid, pid: 4242, comm: comm, groups: [])
    }

    /// Signs at level 0 as `peer` at `start + offset` seconds.
    func signAtLevel0(_ peer: Peer, after offset: TimeInterval) async throws {
        var session = Session(peer: peer, isAdmin: false)
        let reply = await engine.handle(
            line: Array(#"{"id":1,"op":"authenticateUserAndSignData","user":"alice","payload":"p","reason":"r","authLevel":0,"authenticatorType":0}"#.utf8),
            session: &session, now: Self.start.addingTimeInterval(offset))
        guard case let .onAuthenticateUserAndSignData(_, status)? = reply.events.first, status.code == .success else {
            Issue.record("not signed: \(reply.text)"); return
        }
    }

    @Test("level 0: a debug line per signature, and one info line per minute counting them by peer")
    func levelZeroSummarized() async throws {
        for offset in [0.0, 10, 20] { try await signAtLevel0(Self.peer(1000, "builder"), after: offset) }
        for offset in [30.0, 40] { try await signAtLevel0(Self.peer(1001, "deployer"), after: offset) }
        let perSignature = log.lines("signed")
        #expect(perSignature.count == 5)
        #expect(perSignature.allSatisfy { $0.level == .debug && $0.metadata["authLevel"] == "0" })
        // Within the minute: no summary yet, not even when the daemon's timer asks.
        engine.flushSigningSummary(now: Self.start.addingTimeInterval(59))
        #expect(log.lines("signed at level 0").isEmpty)

        // The first signature after the minute closes it and opens the next.
        try await signAtLevel0(Self.peer(1000, "builder"), after: 61)
        let summaries = log.lines("signed at level 0")
        #expect(summaries.count == 1)
        let summary = try #require(summaries.first)
        #expect(summary.level == .info)
        #expect(summary.metadata["signatures"] == "5")
        #expect(summary.metadata["seconds"] == "61")
        #expect(summary.metadata["peers"] == "1000/builder=3,1001/deployer=2")
        #expect(summary.metadata["otherPeers"] == nil)

        // The daemon's timer closes the second window once its minute is over…
        engine.flushSigningSummary(now: Self.start.addingTimeInterval(120))
        #expect(log.lines("signed at level 0").count == 1)
        engine.flushSigningSummary(now: Self.start.addingTimeInterval(121))
        let second = try #require(log.lines("signed at level 0").last)
        #expect(second.metadata["signatures"] == "1" && second.metadata["peers"] == "1000/builder=1")
        // … and with nothing signed since, there is nothing more to say.
        engine.flushSigningSummary(now: Self.start.addingTimeInterval(500))
        #expect(log.lines("signed at level 0").count == 2)
    }

    @Test("a signature behind a step-up keeps its own notice line and is not in the level-0 summary")
    func stepUpKeepsItsLine() async throws {
        var session = Session(peer: Self.peer(1000, "builder"), isAdmin: false)
        _ = await engine.handle(
            line: Array(#"{"id":1,"op":"authenticateUserAndSignData","user":"alice","payload":"p","reason":"r","authLevel":1,"authenticatorType":0}"#.utf8),
            session: &session, now: Self.start)
        let answer = await engine.handle(line: Array(#"{"id":2,"op":"setPassword","password":"Tr1cky-Pelican-42","challengeMode":12}"#.utf8),
                                         session: &session, now: Self.start.addingTimeInterval(1))
        guard case let .onAuthenticateUserAndSignData(details, status)? = answer.events.first, status.code == .success else {
            Issue.record("not signed: \(answer.text)"); return
        }
        // The signature is made at the request's time, which is the test's.
        let claims = try StepSignSignature.verify(details.payloadSignature, trustedKeys: engine.signing.keyring.trustedKeys)
        #expect(claims.iat == Int64(Self.start.timeIntervalSince1970) + 1)
        let line = try #require(log.lines("signed").first)
        #expect(line.level == .notice)
        #expect(line.metadata["signatureID"] == details.dataSignatureID && line.metadata["authLevel"] == "1")
        #expect(line.metadata["peerUID"] == "1000" && line.metadata["peerComm"] == "builder")
        await engine.shutdown()
        #expect(log.lines("signed at level 0").isEmpty)
    }

    @Test("shutdown logs the minute not yet summarized")
    func shutdownFlushes() async throws {
        try await signAtLevel0(Self.peer(1000, "builder"), after: 0)
        await engine.shutdown()
        let summary = try #require(log.lines("signed at level 0").first)
        #expect(summary.metadata["signatures"] == "1")
    }

    @Test("a peer that renames itself cannot grow the summary: past 32 peers they are counted together")
    func peersBounded() {
        let summary = SigningSummary()
        for index in 0..<100 {
            _ = summary.record(uid: 1000, comm: "name-\(index)", now: Self.start.addingTimeInterval(Double(index) / 10))
        }
        _ = summary.record(uid: 1000, comm: "name-0", now: Self.start.addingTimeInterval(20))
        let window = summary.flush(now: Self.start.addingTimeInterval(60))
        #expect(window != nil)
        #expect(window?.byPeer.count == SigningSummary.maxPeers)
        #expect(window?.otherPeers == 100 - SigningSummary.maxPeers)
        #expect(window?.total == 101)
        #expect(window?.byPeer.first?.peer.comm == "name-0" && window?.byPeer.first?.count == 2)
    }
}
