import Foundation
@testable import StepSignEngine
import StepSignConfig
import StepSignCrypto
import StepSignEngineTestSupport
import StepSignFormat
import StepSignProtocol
import StepSignStorage
import StepSignTestSupport
import Testing

/// Approvals that cannot be bent (SPEC §3, §3.4), attacked as a requester who wants to skip a
/// rule, an approver's lookalike, an approver who lost the right after voting, and whoever can
/// write the database, with the daemon running and stopped.
extension ApprovalTests {
    /// Runs `sql` on the engine's SQLite file behind its back.
    func writeBehindTheDaemon(_ sql: String) throws {
        let written = try Tools.python("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.executescript(sys.argv[2])
            db.commit()
            """, directory + "/stepsign.sqlite", sql)
        if written.status != 0 { throw Failure("sqlite3: \(written.stderr)") }
    }

    @Test("a mark after the rule's prefix does not skip the rule: combining mark, variation selector (pending); a ZWJ (refused, 4)",
          arguments: ["payment:\\u0301 wire 25,000 EUR", "payment:\\uFE0F wire 25,000 EUR", "payment:\\u200D\\uD83D\\uDCB8 wire"])
    func markAfterThePrefix(_ reason: String) async throws {
        var session = Session(peer: Self.alicePeer)
        let asked = await send(#"{"id":1,"op":"authenticateUserAndSignData","user":"alice","payload":"pay","reason":"\#(reason)","authLevel":1,"authenticatorType":0}"#,
                               &session)
        if reason.contains("200D") {
            // A zero-width joiner is a format character: a reason may not hold one at all.
            #expect(asked.error?.code == .invalidArguments, "\(asked.line)")
        } else {
            #expect(asked.error == nil, "\(asked.line)")
            let answered = await send(#"{"id":2,"op":"setPassword","password":"\#(Self.password)","challengeMode":12}"#, &session)
            guard case .onApprovalPending? = answered.events.first else { throw Failure("signed without approvals: \(answered.line)") }
        }
        #expect(try await engine.signing.store.ledgerSignatureCount() == 0)
    }

    @Test("an NFD twin of a named approver cannot be added, and one stored before the rule is not that approver")
    func nfdTwinIsNotTheApprover() async throws {
        let (engine, directory) = try await makeTestEngine("engine-approvals-nfd") {
            $0.approvals = [StepSignConfiguration.ApprovalRule(reasonPrefix: "payment:", approvers: ["jos\u{E9}", "carol"], required: 2)]
        }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for user in ["alice", "jos\u{E9}", "carol"] { try await addTestUser(engine, user) }
        var admin = Session(peer: testAdminPeer)
        let twin = await engine.handle(line: Array(#"{"id":1,"op":"admin.addUser","user":"jose\u0301","password":"\#(Self.password)"}"#.utf8),
                                       session: &admin)
        #expect(twin.error?.code == .invalidArguments && twin.error?.message.contains("NFC") == true, "\(twin.line)")
        let cased = await engine.handle(line: Array(#"{"id":1,"op":"admin.addUser","user":"JOS\u00C9","password":"\#(Self.password)"}"#.utf8),
                                        session: &admin)
        #expect(cased.error?.code == .invalidArguments && cased.error?.message.contains("looks like") == true, "\(cased.line)")

        // A twin stored before lookalikes were refused (its key made to differ by hand).
        let edited = try Tools.python("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1]); db.execute("UPDATE users SET name_key = 'legacy' WHERE name_key = ?", (sys.argv[2],)); db.commit()
            """, directory + "/stepsign.sqlite", "jos\u{E9}")
        #expect(edited.status == 0, "\(edited.stderr)")
        let hash = try PasswordHash.make(password: Self.password, parameters: engine.config.password.scryptParameters)
        try await engine.credentials.store.addUser(NewUser(name: "jose\u{301}", passwordHash: hash))
        let listed = await engine.handle(line: Array(#"{"id":1,"op":"admin.listUsers"}"#.utf8), session: &admin)
        let flagged = listed.result?["users"]?.arrayValue?.first { $0["user"]?.stringValue.map { ScalarText.equal($0, "jose\u{301}") } == true }
        #expect(flagged?["lookalikes"]?.arrayValue?.compactMap(\.stringValue).map { Array($0.utf8) } == [Array("jos\u{E9}".utf8)])

        let id = try await request(on: engine)
        var nfd = try await login("jose\\u0301", on: engine)
        let refused = await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id)"}"#, &nfd, on: engine)
        #expect(refused.error?.code == .invalidArguments, "the twin is no approver: \(refused.line)")
        var jose = try await login("jos\\u00E9", on: engine)
        #expect(response(await approve(id, as: &jose, on: engine))! == ("pending", 1))
    }

    @Test("an approver removed from the group after voting no longer counts: the request waits for another")
    func removedApproverIsDropped() async throws {
        _ = try await admin(#"{"id":1,"op":"admin.addGroupMember","group":"treasury","user":"dave"}"#)
        let id = try await request()
        var dave = try await login("dave")
        #expect(response(await approve(id, as: &dave))! == ("pending", 1))
        _ = try await admin(#"{"id":1,"op":"admin.removeGroupMember","group":"treasury","user":"dave"}"#)
        var carol = try await login("carol")
        #expect(response(await approve(id, as: &carol))! == ("pending", 1), "dave's vote is dropped when the second arrives")
        #expect(try await engine.signing.store.ledgerSignatureCount() == 0)
        var bob = try await login("bob")
        #expect(response(await approve(id, as: &bob))! == ("signed", 2))
        let (details, status) = try await outcome(id)
        #expect(status == .success)
        let claims = try StepSignSignature.verify(details.payloadSignature, trustedKeys: engine.signing.keyring.trustedKeys)
        #expect(claims.approvals?.map(\.user) == ["carol", "bob"])
    }

    @Test("an approver blocked after voting no longer counts")
    func blockedApproverIsDropped() async throws {
        let id = try await request()
        var bob = try await login("bob")
        #expect(response(await approve(id, as: &bob))! == ("pending", 1))
        // Bob's account is blocked by wrong answers elsewhere.
        var elsewhere = Session(peer: Self.approverPeer)
        _ = await send(#"{"id":1,"op":"setUser","user":"bob"}"#, &elsewhere)
        for _ in 0..<engine.config.password.maxAttempts {
            _ = await send(#"{"id":2,"op":"setPassword","password":"wrong-Password-1","challengeMode":0}"#, &elsewhere)
        }
        #expect(try await engine.credentials.store.user(named: "bob")?.isBlocked(at: Date()) == true)
        var carol = try await login("carol")
        #expect(response(await approve(id, as: &carol))! == ("pending", 1))
        #expect(try await engine.signing.store.ledgerSignatureCount() == 0)
    }

    @Test("with the daemon running, a vote duplicated under another name and the state set to approved sign nothing; the audit lists it")
    func forgedCompletionWhileRunning() async throws {
        let id = try await request()
        var bob = try await login("bob")
        #expect(response(await approve(id, as: &bob))! == ("pending", 1))
        try writeBehindTheDaemon("""
            INSERT INTO approval_votes (approval_id, approver, auth_level, authenticator, at, seal)
              SELECT approval_id, 'carol', auth_level, authenticator, at, seal FROM approval_votes WHERE approver = 'bob';
            UPDATE approvals SET state = 'approved', signature_id = '0190a0b0-0000-7000-8000-00000000ffff', decided_at = 1 WHERE id = '\(id)';
            """)
        var alice = Session(peer: Self.alicePeer)
        let asked = await send(#"{"id":9,"op":"getApproval","approvalID":"\#(id)"}"#, &alice)
        #expect(asked.error?.code == .wrongState && asked.error?.message.contains("integrity") == true, "\(asked.line)")
        var carol = try await login("carol")
        #expect(await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id)"}"#, &carol).error?.code == .wrongState)
        #expect((await send(#"{"id":5,"op":"listApprovals"}"#, &carol)).result?["approvals"]?.arrayValue?.isEmpty == true)
        await engine.expireApprovals(now: Date().addingTimeInterval(3600))
        #expect(try await engine.signing.store.ledgerSignatureCount() == 0)
        let audit = try await admin(#"{"id":1,"op":"admin.auditVerify"}"#)
        #expect(audit.result?["ok"]?.boolValue == false)
        #expect(audit.result?["unsealedApprovals"]?.arrayValue?.first?["approvalID"]?.stringValue == id)
    }

    @Test("with the daemon stopped, a denied request put back as it was while pending is never approved after a restart")
    func revivedDenialWhileStopped() async throws {
        let id = try await request()
        var bob = try await login("bob")
        #expect(response(await approve(id, as: &bob))! == ("pending", 1))
        let stateColumns = "state, signature_id, decided_by, decision_reason, decided_at, event_index, state_seal"
        try writeBehindTheDaemon("CREATE TABLE approvals_copy AS SELECT \(stateColumns) FROM approvals WHERE id = '\(id)';")
        var carol = try await login("carol")
        _ = await send(#"{"id":3,"op":"denyRequest","approvalID":"\#(id)","reason":"not on the invoice list"}"#, &carol)
        #expect(response(await send(#"{"id":4,"op":"setPassword","password":"\#(Self.password)","challengeMode":12}"#, &carol))?.state == "denied")
        await engine.shutdown()
        try writeBehindTheDaemon("UPDATE approvals SET (\(stateColumns)) = (SELECT \(stateColumns) FROM approvals_copy) WHERE id = '\(id)';")

        let restarted = try await makeTestEngine(engine.config, directory: directory)
        #expect(try await restarted.approvals.store.approval(id: id)?.state == .pending, "the row says pending again")
        _ = try await admin(#"{"id":1,"op":"admin.addGroupMember","group":"treasury","user":"dave"}"#, on: restarted)
        for approver in ["carol", "dave"] {
            var session = try await login(approver, on: restarted)
            let refused = await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id)"}"#, &session, on: restarted)
            #expect(refused.error?.code == .wrongState, "\(approver): \(refused.line)")
        }
        var alice = Session(peer: Self.alicePeer)
        #expect(await send(#"{"id":9,"op":"getApproval","approvalID":"\#(id)"}"#, &alice, on: restarted).error?.code == .wrongState)
        #expect(try await restarted.signing.store.ledgerSignatureCount() == 0)
        let audit = try await admin(#"{"id":1,"op":"admin.auditVerify"}"#, on: restarted)
        #expect(audit.result?["ok"]?.boolValue == false)
        #expect(audit.result?["unsealedApprovals"]?.arrayValue?.first?["problem"]?.stringValue == "rolledBack")
        await restarted.shutdown()
    }
}
