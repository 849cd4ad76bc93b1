import Foundation
import Testing
@testable import StepSignStorage

/// Requests for approval (SPEC §3.4), tried as someone who can write the database but does not
/// hold the seal key: a vote duplicated or forged, a state edited, a whole row forged, a denied
/// request put back as it was while pending. Whatever they write is never acted on, on both
/// backends; and a request completes only with enough distinct approvers who still qualify.
@Suite struct ApprovalSealTests {
    static let rule = ApprovalRuleSnapshot(approvers: ["bob", "carol", "dave"], required: 2, level: 1, type: 0, key: "rule-1")

    private func request(_ id: String = "0190a0b0-0000-7000-8000-00000000aaaa") -> ApprovalRecord {
        ApprovalRecord(id: id, requester: "alice", payload: "pay 100 EUR", payloadLength: 11, reason: "payment: invoice 7",
                       authLevel: 1, authenticatorType: 0, authenticatorUsed: "password",
                       peer: LedgerPeer(uid: 1000, pid: 42, comm: "payroll"), rule: Self.rule, createdAt: epoch,
                       expiresAt: epoch.addingTimeInterval(600))
    }

    private func vote(_ approver: String, seconds: Double = 10) -> ApprovalVote {
        ApprovalVote(approver: approver, authLevel: 1, authenticator: "password", at: epoch.addingTimeInterval(seconds))
    }

    /// An event naming request `id` appended to the ledger, as the engine records each step.
    private func appendEvent(_ store: any StepSignStore, approval id: String, index: Int) async throws {
        var event = ledgerAppend(index, user: "alice")
        event.authLevel = LedgerAppend.eventAuthLevel
        event.approvalID = id
        _ = try await store.appendLedger([event])
    }

    private let now = epoch.addingTimeInterval(60)
    private let reserved = "0190a0b0-0000-7000-8000-00000000ffff"

    @Test(arguments: StoreBackend.allCases)
    func aRequestTheStoreWroteChecksAndCompletesWithTwoDistinctApprovers(_ backend: StoreBackend) async throws {
        try await withTamperableStore(backend) { store, _ in
            let id = request().id
            try await store.createApproval(request())
            try await appendEvent(store, approval: id, index: 1)
            #expect(try await store.approval(id: id)?.sealFailure == nil)
            guard case .counted = try await store.addApprovalVote(id: id, vote: vote("bob"), now: now) else { throw Failure("bob") }
            try await appendEvent(store, approval: id, index: 2)
            #expect(try await store.addApprovalVote(id: id, vote: vote("bob", seconds: 20), now: now) == .alreadyApproved)
            guard case .counted = try await store.addApprovalVote(id: id, vote: vote("carol"), now: now) else { throw Failure("carol") }
            try await appendEvent(store, approval: id, index: 3)
            // Qualified for other votes than those stored: nothing changes.
            guard case .votesChanged = try await store.completeApproval(id: id, voters: ["bob"], qualified: ["bob"],
                                                                         reserving: reserved, now: now) else { throw Failure("changed") }
            guard case let .approved(approved) = try await store.completeApproval(
                id: id, voters: ["carol", "bob"], qualified: ["bob", "carol"], reserving: reserved, now: now) else { throw Failure("approved") }
            #expect(approved.signatureID == reserved && approved.distinctApprovers == ["bob", "carol"])
            let stored = try #require(try await store.approval(id: id))
            #expect(stored.state == .approved && stored.sealFailure == nil)
            #expect(try await store.markApprovalSigned(id: id, signatureID: reserved))
            try await appendEvent(store, approval: id, index: 4)
            #expect(try await store.approval(id: id)?.state == .signed)
            #expect(try await store.allApprovals().map(\.sealFailure) == [nil])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aVoteThatNoLongerQualifiesIsDroppedAndTheRequestWaits(_ backend: StoreBackend) async throws {
        try await withTamperableStore(backend) { store, _ in
            let id = request().id
            try await store.createApproval(request())
            for approver in ["bob", "carol"] { _ = try await store.addApprovalVote(id: id, vote: vote(approver), now: now) }
            guard case let .waiting(waiting, dropped) = try await store.completeApproval(
                id: id, voters: ["bob", "carol"], qualified: ["carol"], reserving: reserved, now: now) else { throw Failure("waiting") }
            #expect(dropped == ["bob"] && waiting.votes.map(\.approver) == ["carol"])
            let stored = try #require(try await store.approval(id: id))
            #expect(stored.state == .pending && stored.votes.map(\.approver) == ["carol"] && stored.sealFailure == nil)
            // Bob may approve again once he qualifies again; then it completes.
            guard case .counted = try await store.addApprovalVote(id: id, vote: vote("bob", seconds: 30), now: now) else { throw Failure("again") }
            guard case .approved = try await store.completeApproval(id: id, voters: ["carol", "bob"], qualified: ["carol", "bob"],
                                                                     reserving: reserved, now: now) else { throw Failure("approved") }
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aVoteRowForgedOrDuplicatedByHandBreaksTheRequest(_ backend: StoreBackend) async throws {
        try await withTamperableStore(backend) { store, raw in
            let id = request().id
            try await store.createApproval(request())
            _ = try await store.addApprovalVote(id: id, vote: vote("bob"), now: now)
            // Bob's row copied under another approver's name, his seal and all.
            try await raw("""
                INSERT INTO approval_votes (approval_id, approver, auth_level, authenticator, at, seal)
                SELECT approval_id, 'carol', auth_level, authenticator, at, seal FROM approval_votes WHERE approver = 'bob'
                """)
            try await raw("UPDATE approvals SET state = 'approved', signature_id = '\(reserved)' WHERE id = '\(id)'")
            let stored = try #require(try await store.approval(id: id))
            #expect(stored.sealFailure == .mismatch)
            #expect(stored.votes.map(\.approver) == ["bob"], "the copied vote's own seal fails too")
            #expect(try await store.completeApproval(id: id, voters: ["bob", "carol"], qualified: ["bob", "carol"],
                                                     reserving: reserved, now: now) == .unsound(.mismatch))
            await #expect(throws: StorageError.approvalSealBroken(id: id, .mismatch)) {
                try await store.markApprovalSigned(id: id, signatureID: reserved)
            }
            #expect(try await store.addApprovalVote(id: id, vote: vote("dave"), now: now) == .unsound(.mismatch))
            #expect(try await store.expireApprovals(now: epoch.addingTimeInterval(3600)).isEmpty, "not even ended")
            #expect(try await store.allApprovals().map(\.sealFailure) == [.mismatch])
        }
    }

    private let requestColumns = """
        requester, payload, payload_length, reason, auth_level, auth_type, authenticator_used, peer_uid, peer_pid, peer_comm, \
        approvers, required, approver_level, approver_type, rule_key, created_at, expires_at, seal, state, signature_id, \
        decided_by, decision_reason, decided_at, event_index, state_seal
        """

    @Test(arguments: StoreBackend.allCases)
    func aFieldOrStateEditedOrARowForgedByHandIsNeverActedOn(_ backend: StoreBackend) async throws {
        try await withTamperableStore(backend) { store, raw in
            let (edited, approved, copied, forged) = ("0190a0b0-0000-7000-8000-00000000000a", "0190a0b0-0000-7000-8000-00000000000b",
                                                      "0190a0b0-0000-7000-8000-00000000000c", "0190a0b0-0000-7000-8000-00000000000d")
            for id in [edited, approved, copied] { try await store.createApproval(request(id)) }
            try await raw("UPDATE approvals SET payload = 'pay 100000 EUR' WHERE id = '\(edited)'")
            try await raw("UPDATE approvals SET state = 'approved', signature_id = '\(reserved)' WHERE id = '\(approved)'")
            // A whole request forged: a genuine one's row, seals and all, under a new ID.
            try await raw("INSERT INTO approvals (id, \(requestColumns)) SELECT '\(forged)', \(requestColumns) FROM approvals WHERE id = '\(copied)'")
            for id in [edited, approved, forged] {
                #expect(try await store.approval(id: id)?.sealFailure == .mismatch, "\(id)")
                #expect(try await store.addApprovalVote(id: id, vote: vote("bob"), now: now) == .unsound(.mismatch))
            }
            await #expect(throws: StorageError.approvalSealBroken(id: approved, .mismatch)) {
                try await store.markApprovalSigned(id: approved, signatureID: reserved)
            }
            #expect(try await store.approval(id: copied)?.sealFailure == nil)
            #expect(try await store.pendingApprovals().filter { $0.sealFailure == nil }.map(\.id) == [copied])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aDeniedRequestPutBackAsItWasWhilePendingIsNeverActedOn(_ backend: StoreBackend) async throws {
        try await withTamperableStore(backend) { store, raw in
            let id = request().id
            try await store.createApproval(request())
            try await appendEvent(store, approval: id, index: 1)
            _ = try await store.addApprovalVote(id: id, vote: vote("bob"), now: now)
            try await appendEvent(store, approval: id, index: 2)
            let stateColumns = "state, signature_id, decided_by, decision_reason, decided_at, event_index, state_seal"
            try await raw("CREATE TABLE approvals_copy AS SELECT \(stateColumns) FROM approvals WHERE id = '\(id)'")
            // Carol denies (and the log says so); then the pending copy, sealed then, is put back.
            #expect(try await store.endApproval(id: id, as: .denied, by: "carol", reason: "no", now: now))
            try await appendEvent(store, approval: id, index: 3)
            #expect(try await store.approval(id: id)?.sealFailure == nil)
            try await raw("UPDATE approvals SET (\(stateColumns)) = (SELECT \(stateColumns) FROM approvals_copy) WHERE id = '\(id)'")
            let revived = try #require(try await store.approval(id: id))
            #expect(revived.state == .pending && revived.votes.map(\.approver) == ["bob"])
            #expect(revived.sealFailure == .rolledBack(recordIndex: 1, latestIndex: 2))
            #expect(try await store.addApprovalVote(id: id, vote: vote("dave"), now: now) == .unsound(.rolledBack(recordIndex: 1, latestIndex: 2)))
            #expect(try await store.completeApproval(id: id, voters: ["bob"], qualified: ["bob"], reserving: reserved, now: now)
                == .unsound(.rolledBack(recordIndex: 1, latestIndex: 2)))
            await #expect(throws: StorageError.approvalSealBroken(id: id, .rolledBack(recordIndex: 1, latestIndex: 2))) {
                try await store.endApproval(id: id, as: .expired, by: nil, reason: "timeout", now: now)
            }
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func requestsFromBeforeStateSealsAreSealedOnceOnTheUpgrade(_ backend: StoreBackend) async throws {
        try await withTamperableStore(backend) { store, raw in
            let id = request().id
            try await store.createApproval(request())
            try await raw("UPDATE approvals SET state_seal = NULL, event_index = NULL WHERE id = '\(id)'")
            #expect(try await store.approval(id: id)?.sealFailure == .missing, "after the upgrade, a missing state seal is a failure")
        }
    }

    @Test func theUpgradeKeepsLookalikesIndexesEventsAndSealsOpenRequests() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        let store = try directory.open()
        try await store.addUser(newUser("alice"))
        let id = request().id
        try await store.createApproval(request())
        try await appendEvent(store, approval: id, index: 1)
        // Back to schema v12 by hand, with a lookalike of alice added as v12 allowed.
        for sql in ["DROP INDEX users_by_name_key", "ALTER TABLE users DROP COLUMN name_key", "DROP TABLE approval_events",
                    "ALTER TABLE approvals DROP COLUMN event_index", "ALTER TABLE approvals DROP COLUMN state_seal",
                    "DELETE FROM store_secrets WHERE name = 'approval_state_seals'",
                    "DELETE FROM grdb_migrations WHERE identifier LIKE 'v14-%'",
                    "INSERT INTO users SELECT 'Alice', password_hash, password_changed_at, password_expired, must_change_password, failed_attempts, blocked, blocked_until, created_at, credential_token, event_index, history_digest, device_keys_digest, seal FROM users WHERE name = 'alice'"] {
            try await store.executeRawSQL(sql)
        }
        try await store.close()

        let upgraded = try directory.open()
        #expect(try await upgraded.listUsers().map(\.name).sorted() == ["Alice", "alice"], "nothing deleted")
        await #expect(throws: StorageError.self) { try await upgraded.addUser(newUser("ALICE")) }
        let open = try #require(try await upgraded.approval(id: id))
        #expect(open.sealFailure == nil, "the open request is sealed, bound to its event (indexed from the ledger)")
        guard case .counted = try await upgraded.addApprovalVote(id: id, vote: vote("bob"), now: now) else { throw Failure("vote") }
        try await upgraded.close()
    }

    struct Failure: Error, CustomStringConvertible { var description: String; init(_ d: String) { description = d } }
}
