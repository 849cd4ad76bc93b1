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

/// Approval by several people (SPEC §3.4), attacked: a request a rule matches is not signed
/// until `required` approvers other than the requester have each stepped up once; the
/// requester's own approval never counts, nor an approver's second; an answer after the
/// timeout, after a denial or after a reload removed the rule does not sign; a device's
/// signature over another request's text does not approve this one; group membership holds
/// only as the log says; requests survive a restart.
@Suite("Approval by several people")
final class ApprovalTests: Sendable {
    let directory: String
    let engine: Engine
    static let rule = StepSignConfiguration.ApprovalRule(reasonPrefix: "payment:", approvers: ["bob", "carol", "group:treasury"],
                                                         required: 2, timeoutSeconds: 600)
    static let alicePeer = Peer(uid: 1000, gid: 1000, pid: 42, comm: "payroll", groups: [])
    static let approverPeer = Peer(uid: 1001, gid: 1001, pid: 77, comm: "stepsign", groups: [])
    static let password = testUserPassword

    init() async throws {
        (engine, directory) = try await makeTestEngine("engine-approvals") { $0.approvals = [Self.rule] }
        for user in ["alice", "bob", "carol", "dave", "eve"] { try await addTestUser(engine, user) }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    struct Failure: Error, CustomStringConvertible { var description: String; init(_ d: String) { description = d } }

    func send(_ text: String, _ session: inout Session, on engine: Engine? = nil, now: Date = Date()) async -> Reply {
        await (engine ?? self.engine).handle(line: Array(text.utf8), session: &session, now: now)
    }

    func admin(_ text: String, on engine: Engine? = nil) async throws -> Reply {
        var session = Session(peer: testAdminPeer, isAdmin: true)
        let reply = await send(text, &session, on: engine)
        if let error = reply.error { throw Failure("\(text): \(error.message)") }
        return reply
    }

    /// Alice asks for a signature of `payload` (a "payment:" reason) and steps up: the approval ID.
    func request(_ payload: String = "pay 100 EUR to Mallory", reason: String = "payment: invoice 7", on engine: Engine? = nil,
                 now: Date = Date()) async throws -> String {
        var session = Session(peer: Self.alicePeer)
        _ = await send(#"{"id":1,"op":"authenticateUserAndSignData","user":"alice","payload":"\#(payload)","reason":"\#(reason)","authLevel":1,"authenticatorType":0}"#,
                       &session, on: engine, now: now)
        let pending = await send(#"{"id":2,"op":"setPassword","password":"\#(Self.password)","challengeMode":12}"#, &session, on: engine, now: now)
        guard case let .onApprovalPending(id, required, approvers, _)? = pending.events.first else { throw Failure("not pending: \(pending.line)") }
        #expect(required == 2 && (engine != nil || approvers == Self.rule.approvers))
        return id
    }

    /// A logged-in session of `user`.
    func login(_ user: String, on engine: Engine? = nil, now: Date = Date()) async throws -> Session {
        var session = Session(peer: Self.approverPeer)
        _ = await send(#"{"id":1,"op":"setUser","user":"\#(user)"}"#, &session, on: engine, now: now)
        let in_ = await send(#"{"id":2,"op":"setPassword","password":"\#(Self.password)","challengeMode":0}"#, &session, on: engine, now: now)
        guard case .onUserLoggedIn? = in_.events.first else { throw Failure("\(user) not logged in: \(in_.line)") }
        return session
    }

    /// `user` approves `id` with the password step-up: the reply to the step-up's answer.
    func approve(_ id: String, as session: inout Session, on engine: Engine? = nil, now: Date = Date()) async -> Reply {
        let challenge = await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id)"}"#, &session, on: engine, now: now)
        guard challenge.error == nil else { return challenge }
        return await send(#"{"id":4,"op":"setPassword","password":"\#(Self.password)","challengeMode":12}"#, &session, on: engine, now: now)
    }

    func response(_ reply: Reply) -> (state: String, approvals: Int)? {
        guard case let .onApprovalResponse(_, _, state, approvals, _, status)? = reply.events.first, status == .success else { return nil }
        return (state, approvals)
    }

    func outcome(_ id: String, on engine: Engine? = nil, now: Date = Date()) async throws -> (SigningDetails, Status) {
        var session = Session(peer: Self.alicePeer)
        let reply = await send(#"{"id":9,"op":"getApproval","approvalID":"\#(id)"}"#, &session, on: engine, now: now)
        guard case let .onAuthenticateUserAndSignData(details, status)? = reply.events.first else { throw Failure("no outcome: \(reply.line)") }
        return (details, status)
    }

    @Test("the request waits, unsigned; two approvers sign it; the claims name them; every step is a log event")
    func twoApprovalsSign() async throws {
        let before = try await engine.signing.store.ledgerSignatureCount()
        let id = try await request()
        #expect(try await engine.signing.store.ledgerSignatureCount() == before, "nothing signed while pending")

        var bob = try await login("bob")
        let listed = await send(#"{"id":5,"op":"listApprovals"}"#, &bob)
        let rows = listed.result?["approvals"]?.arrayValue ?? []
        #expect(rows.count == 1 && rows.first?["approvalID"]?.stringValue == id)
        #expect(rows.first?["payload"]?.stringValue == "pay 100 EUR to Mallory" && rows.first?["requester"]?.stringValue == "alice")
        #expect(rows.first?["peer"]?["comm"]?.stringValue == "payroll" && rows.first?["peer"]?["uid"]?.int == 1000)

        #expect(response(await approve(id, as: &bob))! == ("pending", 1))
        var carol = try await login("carol")
        #expect(response(await approve(id, as: &carol))! == ("signed", 2))

        let (details, status) = try await outcome(id)
        #expect(status == .success)
        let claims = try StepSignSignature.verify(details.payloadSignature, trustedKeys: engine.signing.keyring.trustedKeys)
        #expect(claims.sub == "alice" && claims.payload == "pay 100 EUR to Mallory" && claims.peer?.comm == "payroll")
        #expect(claims.approvals?.map(\.user) == ["bob", "carol"] && claims.approvals?.allSatisfy { $0.authenticator == "password" } == true)
        #expect(try await engine.signing.store.ledgerSignatureCount() == before + 1)

        let events = try await engine.signing.store.ledgerEntries(afterSeq: 0, limit: 1000)
            .events(verifiedBy: engine).map(\.kind)
        for kind in [LedgerEvent.Kind.approvalRequested, .approvalGranted, .approvalSigned] { #expect(events.contains(kind), "\(kind)") }
        #expect(events.filter { $0 == .approvalGranted }.count == 2)
    }

    @Test("the requester's own approval is refused and does not count; an approver counts once")
    func selfAndTwice() async throws {
        let id = try await request()
        var alice = try await login("alice")
        let own = await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id)"}"#, &alice)
        #expect(own.error?.code == .permissionDenied && alice.pending == nil)

        var bob = try await login("bob")
        #expect(response(await approve(id, as: &bob))! == ("pending", 1))
        let again = await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id)"}"#, &bob)
        #expect(again.error?.code == .wrongState)
        // Bob from two sessions at once, both past the check before either answered: one counts.
        let id2 = try await request("pay 200 EUR")
        var first = try await login("bob"), second = try await login("bob")
        _ = await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id2)"}"#, &first)
        _ = await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id2)"}"#, &second)
        let answer = #"{"id":4,"op":"setPassword","password":"\#(Self.password)","challengeMode":12}"#
        async let a = engine.handle(line: Array(answer.utf8), session: &first)
        var secondCopy = second
        async let b = engine.handle(line: Array(answer.utf8), session: &secondCopy)
        let replies = await [a, b]
        #expect(replies.filter { response($0) != nil }.count == 1, "\(replies.map(\.line))")
        #expect(replies.filter { $0.error?.code == .wrongState }.count == 1)
        #expect(try await engine.approvals.store.approval(id: id2)?.votes.count == 1)
    }

    @Test("a user who is no approver gets 4, as for an unknown request; nothing changes")
    func notAnApprover() async throws {
        let id = try await request()
        var eve = try await login("eve")
        #expect(await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id)"}"#, &eve).error?.code == .invalidArguments)
        #expect(await send(#"{"id":3,"op":"approveRequest","approvalID":"0190a0b0-0000-7000-8000-000000000000"}"#, &eve).error?.code == .invalidArguments)
        #expect((await send(#"{"id":5,"op":"listApprovals"}"#, &eve)).result?["approvals"]?.arrayValue?.isEmpty == true)
        #expect(try await engine.approvals.store.approval(id: id)?.votes.isEmpty == true)
        var stranger = Session(peer: Self.approverPeer)
        #expect(await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id)"}"#, &stranger).error?.code == .wrongState, "not logged in")
    }

    @Test("after the timeout an approval is refused and the request ends with 122, recorded once")
    func timeout() async throws {
        let t0 = Date()
        let id = try await request(now: t0)
        var bob = try await login("bob", now: t0)
        let late = t0.addingTimeInterval(601)
        let refused = await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id)"}"#, &bob, now: late)
        #expect(refused.error?.code == .wrongState && refused.error?.message.contains("expired") == true)
        let (_, status) = try await outcome(id, now: late)
        #expect(status.code == .approvalExpired)
        await engine.expireApprovals(now: late.addingTimeInterval(10))
        let expiries = try await engine.signing.store.ledgerEvents(user: "alice", afterSeq: 0, limit: 100)
            .events(verifiedBy: engine)
            .filter { $0.kind == .approvalExpired }
        #expect(expiries.count == 1)
    }

    @Test("the sweep ends requests whose time is over, once")
    func sweep() async throws {
        let t0 = Date()
        let id = try await request(now: t0)
        await engine.expireApprovals(now: t0.addingTimeInterval(599))
        #expect(try await engine.approvals.store.approval(id: id)?.state == .pending)
        await engine.expireApprovals(now: t0.addingTimeInterval(601))
        await engine.expireApprovals(now: t0.addingTimeInterval(602))
        #expect(try await engine.approvals.store.approval(id: id)?.state == .expired)
        let expiries = try await engine.signing.store.ledgerEvents(user: "alice", afterSeq: 0, limit: 100)
            .events(verifiedBy: engine)
            .filter { $0.kind == .approvalExpired }
        #expect(expiries.count == 1)
    }

    @Test("a denial ends the request with 121; later approvals are refused")
    func denial() async throws {
        let id = try await request()
        var carol = try await login("carol")
        _ = await send(#"{"id":3,"op":"denyRequest","approvalID":"\#(id)","reason":"not on the invoice list"}"#, &carol)
        let denied = await send(#"{"id":4,"op":"setPassword","password":"\#(Self.password)","challengeMode":12}"#, &carol)
        #expect(response(denied)?.state == "denied")
        let (details, status) = try await outcome(id)
        #expect(status.code == .approvalDenied && status.message.contains("not on the invoice list") && details.payloadSignature.isEmpty)
        var bob = try await login("bob")
        #expect(await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id)"}"#, &bob).error?.code == .wrongState)
    }

    @Test("a reload that removes the rule ends its requests as expired (122): approving one is refused")
    func ruleRemovedByReload() async throws {
        let id = try await request()
        var bob = try await login("bob")
        #expect(response(await approve(id, as: &bob))! == ("pending", 1))
        var changed = engine.config
        changed.approvals = [StepSignConfiguration.ApprovalRule(reasonPrefix: "payment:", approvers: ["bob", "carol"], required: 2)]
        try await engine.reload(changed, sha256: [UInt8](repeating: 1, count: 32))
        var carol = try await login("carol")
        let refused = await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id)"}"#, &carol)
        #expect(refused.error?.code == .wrongState)
        let (_, status) = try await outcome(id)
        #expect(status.code == .approvalExpired && status.message.contains("reload"))
        #expect(try await engine.signing.store.ledgerSignatureCount() == 0)
    }

    @Test("the approver's device signs a text naming the request's digest; a signature over another request's text does not approve")
    func deviceKeyBindsTheDigest() async throws {
        let device = try P256PrivateKey.generate()
        let pem = device.publicKey.spkiPEM.replacingOccurrences(of: "\n", with: "\\n")
        _ = try await admin(#"{"id":2,"op":"admin.enrollDeviceKey","user":"bob","publicKey":"\#(pem)"}"#)
        let kid = device.publicKey.thumbprint
        let id = try await request(), other = try await request("pay 999 EUR elsewhere")

        var decoy = try await login("bob")
        let decoyChallenge = await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(other)"}"#, &decoy)
        guard case let .getLDASignature(_, _, decoyText, _, _, _, _)? = decoyChallenge.events.first else { throw Failure("\(decoyChallenge.line)") }

        var bob = try await login("bob")
        let challenge = await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id)"}"#, &bob)
        guard case let .getLDASignature(_, mode, text, _, _, _, _)? = challenge.events.first, let bytes = Base64URL.decode(text) else {
            throw Failure("no device challenge: \(challenge.line)")
        }
        #expect(mode == .stepUpForSigning)
        let record = try #require(try await engine.approvals.store.approval(id: id))
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "stepsign-lda-approval-v1" && lines[2] == "bob" && lines[3] == "approve" && lines[4] == id)
        #expect(lines[5] == Hex.encode(ApprovalDecision.digest(of: record)) && lines[6] == "alice" && lines[8] == "payment: invoice 7")
        #expect(lines[7] == Hex.encode(SHA256.hash(Array("pay 100 EUR to Mallory".utf8))) && lines[9] == "payroll")

        let misdirected = Base64URL.encode(try device.signatureES256(for: try #require(Base64URL.decode(decoyText))))
        let refused = await send(#"{"id":4,"op":"setLDASignature","deviceKeyId":"\#(kid)","signature":"\#(misdirected)"}"#, &bob)
        guard case let .getLDASignature(_, _, fresh, _, _, status, _)? = refused.events.first else { throw Failure("\(refused.line)") }
        #expect(status.code == .authenticationFailed)
        #expect(try await engine.approvals.store.approval(id: id)?.votes.isEmpty == true)
        let right = Base64URL.encode(try device.signatureES256(for: try #require(Base64URL.decode(fresh))))
        let accepted = await send(#"{"id":5,"op":"setLDASignature","deviceKeyId":"\#(kid)","signature":"\#(right)"}"#, &bob)
        #expect(response(accepted)! == ("pending", 1))
        #expect(try await engine.approvals.store.approval(id: id)?.votes.first?.authenticator == "lda")
    }

    @Test("group members approve while the log says they are members: not after a removal, a put-back row, or a re-added user")
    func groups() async throws {
        _ = try await admin(#"{"id":1,"op":"admin.addGroupMember","group":"treasury","user":"dave"}"#)
        let listed = try await admin(#"{"id":1,"op":"admin.listGroups"}"#)
        #expect(listed.result?["groups"]?.arrayValue?.first?["members"]?.arrayValue?.compactMap(\.stringValue) == ["dave"])
        let id = try await request()
        var dave = try await login("dave")
        #expect(response(await approve(id, as: &dave))! == ("pending", 1))

        // Removed: no longer an approver. The row put back as it was (a database writer's
        // replay) does not make him one again: the log says he was removed.
        let member = try #require(try await engine.approvals.store.groupMembers().first)
        _ = try await admin(#"{"id":1,"op":"admin.removeGroupMember","group":"treasury","user":"dave"}"#)
        try await engine.approvals.store.addGroupMember(member)
        let id2 = try await request("pay 300 EUR")
        var dave2 = try await login("dave")
        #expect(await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id2)"}"#, &dave2).error?.code == .invalidArguments)

        // Added again: a member again.
        _ = try await admin(#"{"id":1,"op":"admin.addGroupMember","group":"treasury","user":"dave"}"#)
        #expect(await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id2)"}"#, &dave2).error == nil)
        dave2.pending = nil

        // A removed user added again under the same name is not the old member.
        _ = try await admin(#"{"id":1,"op":"admin.removeUser","user":"dave"}"#)
        try await addTestUser(engine, "dave")
        var newDave = try await login("dave")
        #expect(await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id2)"}"#, &newDave).error?.code == .invalidArguments)
        let groupEvents = try await engine.signing.store.ledgerEvents(user: "dave", afterSeq: 0, limit: 100)
            .events(verifiedBy: engine).map(\.kind)
        #expect(groupEvents.filter { $0 == .groupMemberAdded }.count == 2 && groupEvents.contains(.groupMemberRemoved))
    }

    @Test("a membership row written behind the daemon's back (no seal) makes nobody an approver")
    func forgedMembership() async throws {
        let id = try await request()
        let path = directory + "/stepsign.sqlite"
        let forged = try Tools.python("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute("INSERT INTO group_members VALUES ('treasury', 'eve', 1, x'00')")
            db.commit()
            """, path)
        #expect(forged.status == 0, "\(forged.stderr)")
        var eve = try await login("eve")
        #expect(await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id)"}"#, &eve).error?.code == .invalidArguments)
    }

    @Test("the last two approvals racing complete the request once: one signature")
    func racingCompletion() async throws {
        _ = try await admin(#"{"id":1,"op":"admin.addGroupMember","group":"treasury","user":"dave"}"#)
        let id = try await request()
        var bob = try await login("bob")
        #expect(response(await approve(id, as: &bob))! == ("pending", 1))
        var carol = try await login("carol"), dave = try await login("dave")
        _ = await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id)"}"#, &carol)
        _ = await send(#"{"id":3,"op":"approveRequest","approvalID":"\#(id)"}"#, &dave)
        let answer = #"{"id":4,"op":"setPassword","password":"\#(Self.password)","challengeMode":12}"#
        async let a = engine.handle(line: Array(answer.utf8), session: &carol)
        async let b = engine.handle(line: Array(answer.utf8), session: &dave)
        let replies = await [a, b]
        // Each answer is counted, or refused once the request is no longer pending; whichever
        // completed it signed it, and a counted answer that came too late to complete it
        // reports the request as it stands (approved while the other signs, or signed).
        for reply in replies {
            #expect(["signed", "approved"].contains(response(reply)?.state) || reply.error?.code == .wrongState, "\(reply.line)")
        }
        #expect(replies.contains { response($0)?.state == "signed" })
        #expect(try await engine.signing.store.ledgerSignatureCount() == 1)
        let signed = try await engine.signing.store.ledgerEvents(user: "alice", afterSeq: 0, limit: 100)
            .events(verifiedBy: engine).filter { $0.kind == .approvalSigned }
        #expect(signed.count == 1)
    }

    @Test("a pending request survives a restart of the daemon and is signed after it")
    func survivesRestart() async throws {
        let id = try await request()
        await engine.shutdown()
        let restarted = try await makeTestEngine(engine.config, directory: directory)
        var bob = try await login("bob", on: restarted)
        let rows = (await send(#"{"id":5,"op":"listApprovals"}"#, &bob, on: restarted)).result?["approvals"]?.arrayValue ?? []
        #expect(rows.map { $0["approvalID"]?.stringValue } == [id])
        #expect(response(await approve(id, as: &bob, on: restarted))! == ("pending", 1))
        var carol = try await login("carol", on: restarted)
        #expect(response(await approve(id, as: &carol, on: restarted))! == ("signed", 2))
        #expect(try await outcome(id, on: restarted).1 == .success)
    }

    @Test("a batch with an item a rule matches is refused (170); other requests sign as before")
    func batchesAndOthers() async throws {
        var session = Session(peer: Self.alicePeer)
        let batch = await send(#"{"id":1,"op":"authenticateUserAndSignBatch","user":"alice","items":[{"payload":"a","reason":"release"},{"payload":"b","reason":"payment: x"}],"authLevel":1,"authenticatorType":0}"#, &session)
        #expect(batch.error?.code == .notSupported && batch.error?.message.contains("items[1]") == true)
        _ = await send(#"{"id":1,"op":"authenticateUserAndSignData","user":"alice","payload":"p","reason":"release","authLevel":1,"authenticatorType":0}"#, &session)
        let signed = await send(#"{"id":2,"op":"setPassword","password":"\#(Self.password)","challengeMode":12}"#, &session)
        guard case let .onAuthenticateUserAndSignData(_, status)? = signed.events.first else { throw Failure("\(signed.line)") }
        #expect(status == .success)
    }

    @Test("approvers are told through the notifier, without the payload; the requester is not")
    func notified() async throws {
        _ = try await admin(#"{"id":1,"op":"admin.addGroupMember","group":"treasury","user":"alice"}"#)
        let id = try await request()
        let outbox = directory + "/outbox"
        for user in ["bob", "carol"] {
            let text = try String(contentsOfFile: outbox + "/" + user, encoding: .utf8)
            let notice = try JSONParser.parse(Array(text.split(separator: "\n").last!.utf8))
            #expect(notice["kind"]?.stringValue == "approvalPending" && notice["approvalID"]?.stringValue == id)
            #expect(notice["payloadSHA256"]?.stringValue == Hex.encode(SHA256.hash(Array("pay 100 EUR to Mallory".utf8))))
            #expect(!text.contains("Mallory"))
        }
        #expect(!FileManager.default.fileExists(atPath: outbox + "/alice"))
    }

    @Test("a requester has at most 32 requests waiting (then 14): the approvers' notifications are bounded")
    func pendingCap() async throws {
        let (open, dir) = try await makeTestEngine("engine-approvals-cap") {
            $0.signing.allowLevel0 = true
            $0.approvals = [StepSignConfiguration.ApprovalRule(reasonPrefix: "payment:", approvers: ["bob"], required: 1)]
        }
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for user in ["alice", "bob"] { try await addTestUser(open, user) }
        var session = Session(peer: Self.alicePeer)
        var codes: [Int] = []
        for n in 0..<33 {
            let reply = await send(#"{"id":1,"op":"authenticateUserAndSignData","user":"alice","payload":"\#(n)","reason":"payment: \#(n)","authLevel":0,"authenticatorType":0}"#,
                                   &session, on: open)
            codes.append(reply.error?.code.rawValue ?? 0)
        }
        #expect(codes.prefix(32).allSatisfy { $0 == 0 } && codes.last == 14)
    }

    @Test("an IDV approver's challenge is stepsign-idv-approval-v1 naming the digest; its txn differs for another request")
    func idvTextBindsTheDigest() async throws {
        let id = try await request(), other = try await request("pay 7 EUR")
        let first = try #require(try await engine.approvals.store.approval(id: id))
        let second = try #require(try await engine.approvals.store.approval(id: other))
        let challenge = try IDVBiometricStepUp(for: ApprovalDecision(approver: "bob", kind: .approve, request: first).subject,
                                               peer: Self.approverPeer).challenge
        let lines = String(decoding: challenge.text, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines[0] == "stepsign-idv-approval-v1" && lines[1] == challenge.nonce && lines[2] == "bob")
        #expect(lines[3] == "approve" && lines[4] == id && lines[5] == Hex.encode(ApprovalDecision.digest(of: first)))
        let elsewhere = ApprovalDecision(approver: "bob", kind: .approve, request: second).text(version: ApprovalDecision.idvVersion,
                                                                                                nonce: challenge.nonce)
        #expect(IDVChallengeText.txn(of: elsewhere) != IDVChallengeText.txn(of: challenge.text))
        let denial = ApprovalDecision(approver: "bob", kind: .deny(reason: "no"), request: first)
            .text(version: ApprovalDecision.idvVersion, nonce: challenge.nonce)
        #expect(String(decoding: denial, as: UTF8.self)
            == (lines[0...2] + ["deny"] + lines[4...] + ["no"]).joined(separator: "\n"), "a denial names itself and its reason")
    }

    @Test("a request approved but not signed (the daemon stopped in between) is signed by a later getApproval, once")
    func unfinishedApprovalIsSignedOnce() async throws {
        let id = try await request()
        let past = Date().addingTimeInterval(-120)
        for approver in ["bob", "carol"] {
            _ = try await engine.approvals.store.addApprovalVote(
                id: id, vote: ApprovalVote(approver: approver, authLevel: 1, authenticator: "password", at: past), now: past)
        }
        let completed = try await engine.approvals.store.completeApproval(
            id: id, voters: ["bob", "carol"], qualified: ["bob", "carol"],
            reserving: try UUIDv7.generate(unixMilliseconds: UInt64(past.timeIntervalSince1970 * 1000)), now: past)
        guard case .approved = completed else { throw Failure("not approved: \(completed)") }
        #expect(try await engine.approvals.store.approval(id: id)?.state == .approved)
        let (details, status) = try await outcome(id)
        #expect(status == .success && !details.payloadSignature.isEmpty)
        #expect(try await outcome(id).1 == .success)
        let signedEvents = try await engine.signing.store.ledgerEvents(user: "alice", afterSeq: 0, limit: 100)
            .events(verifiedBy: engine)
            .filter { $0.kind == .approvalSigned }
        #expect(signedEvents.count == 1)
        #expect(try await engine.signing.store.ledgerSignatureCount() == 1)
    }
}

extension Array where Element == LedgerEntry {
    /// The events among these entries, each verified against `engine`'s trusted keys: an event
    /// that does not verify fails the test instead of being left out.
    func events(verifiedBy engine: Engine) throws -> [LedgerEvent] {
        try filter { $0.authLevel < 0 }.map { try LedgerEvent.verify($0.jws, trustedKeys: engine.signing.keyring.trustedKeys).event }
    }
}
