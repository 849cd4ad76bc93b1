import Foundation
import GRDB
import StepSignCrypto
import StepSignFormat
import StepSignPostgres
@testable import StepSignStorage
import Testing

/// The copy behind `stepsign admin migrate` (issue 14) at the store level: a SQLite store
/// with more than a page of ledger rows copied into a fresh PostgreSQL database, and the
/// source held still meanwhile.
@Suite(.enabled(if: PostgresTestServer.enabled)) struct SQLiteToPostgresMigrationTests {
    @Test func aSourceRecordThatFailsItsSealIsNotCarriedAcrossAndNothingIsWritten() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        let sqlite = try directory.open()
        try await sqlite.addUser(newUser("alice"))
        try await sqlite.addUser(newUser("mallory"))
        try await sqlite.executeRawSQL("UPDATE users SET password_hash = 'scrypt$attackers' WHERE name = 'mallory'")
        try await sqlite.close()
        try await withPostgresDatabase { database in
            let target = try await database.open()
            let source = try SQLiteMigrationSource.open(path: directory.path + "/" + SQLiteStore.fileName, seal: TestSeal.seal,
                                                        sealUnsealed: false)
            await #expect(throws: PostgresImportError.unsealedRecords(users: ["mallory"])) {
                try await SQLiteToPostgresMigration(source: source, target: target, checkpointEntries: nil).run()
            }
            #expect(try await target.listUsers().isEmpty)
            try await source.close()
            try await target.close()
        }
    }

    @Test func everythingCopiedReadsBackThroughThePostgresStore() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        let sqlite = try directory.open()
        try await sqlite.addUser(newUser("alice"))
        try await sqlite.addUser(newUser("bob", mustChange: true))
        try await sqlite.setPassword(user: "alice", hash: "scrypt$second", at: epoch.addingTimeInterval(60.123456789), historyLimit: 5)
        try await sqlite.setPassword(user: "alice", hash: "scrypt$third", at: epoch.addingTimeInterval(120), historyLimit: 5)
        try await sqlite.wrongAnswer("bob", maxAttempts: 1, blockSeconds: 600)
        try await sqlite.addDeviceKey(DeviceKeyRecord(kid: "dk-1", user: "alice", publicKeyJWK: "{}", label: "phone",
                                                      createdAt: epoch, revokedAt: epoch.addingTimeInterval(1)))
        try await sqlite.addDeviceKey(DeviceKeyRecord(kid: "dk-2", user: "alice", publicKeyJWK: "{\"k\":1}", label: "tablet",
                                                      createdAt: epoch.addingTimeInterval(2)))
        // A FIDO2 security key (SPEC 5.7) moves with its credential ID and signature counter.
        try await sqlite.addFIDO2DeviceKey(DeviceKeyRecord(kid: "dk-3", user: "alice", publicKeyJWK: "{\"k\":2}", label: "usb key",
                                                           createdAt: epoch.addingTimeInterval(3)), credentialID: "Y3JlZA")
        #expect(try await sqlite.useFIDO2Assertion(kid: "dk-3", signCount: 41, nonce: "n", expiresAt: epoch.addingTimeInterval(60),
                                                   now: epoch) == .accepted)
        try await sqlite.addSigningKey(kid: "kid-1", createdAt: epoch, instance: "host-a")
        try await sqlite.addSigningKey(kid: "kid-2", createdAt: epoch.addingTimeInterval(5), instance: "host-a")
        // More than two pages of SQLiteToPostgresMigration.pageSize, with checkpoints in the batches.
        let total = 2 * SQLiteToPostgresMigration.pageSize + 150
        var start = 0
        while start < total {
            let end = min(start + 400, total)
            _ = try await sqlite.appendLedger(ledgerBatch(start..<end))
            // A JWS checkpoint of an older ledger at every 500th entry (the daemon makes notes now).
            for seq in stride(from: (start / 500 + 1) * 500, through: end, by: 500) {
                let entry = try await sqlite.ledgerEntries(afterSeq: Int64(seq - 1), limit: 1)[0]
                try await sqlite.appendCheckpoint(LedgerCheckpointRecord(seq: entry.seq, entryHash: entry.entryHash, kid: "kid-2",
                                                                         jws: "checkpoint-\(seq)", createdAt: epoch))
            }
            start = end
        }
        // Revoked after it signed the ledger: its rows must still go in (the keys go last).
        #expect(try await sqlite.revokeSigningKey(kid: "kid-1", at: epoch.addingTimeInterval(6)))
        try await sqlite.close()

        try await withPostgresDatabase { database in
            let target = try await database.open()
            let source = try SQLiteMigrationSource.open(path: directory.path + "/" + SQLiteStore.fileName, seal: TestSeal.seal, sealUnsealed: false)
            let summary: MigrationSummary
            do {
                summary = try await SQLiteToPostgresMigration(source: source, target: target, checkpointEntries: nil).run()
            } catch {
                try? await source.close()
                try? await target.close()
                throw error
            }
            let original = source.store
            #expect(summary.users == 2 && summary.passwordHistoryEntries == 2 && summary.deviceKeys == 3)
            #expect(summary.signingKeys == 2 && summary.ledgerEntries == Int64(total) && summary.checkpoints == 4)
            // Key records without public halves (made before the column): the chain is what is checked.
            #expect(!summary.signaturesChecked)
            #expect(summary.audit == LedgerAudit(ok: true, entries: total, firstBadSeq: nil))
            #expect(summary.sourceAudit == summary.audit)
            #expect(try await target.ledgerHead() == original.ledgerHead())
            #expect(try await target.passwordHistory(user: "alice", limit: 5) == ["scrypt$third", "scrypt$second", "scrypt$initial"])
            let bob = try #require(try await target.user(named: "bob"))
            #expect(bob.blocked && bob.failedAttempts == 1 && bob.mustChangePassword)
            #expect(bob.credentialToken == (try await original.user(named: "bob"))?.credentialToken)
            #expect(try await target.deviceKeys(user: "alice", includeRevoked: true).map(\.kid) == ["dk-1", "dk-2", "dk-3"])
            #expect(try await target.deviceKeys(user: "alice", includeRevoked: false).map(\.kid) == ["dk-2", "dk-3"])
            #expect(try await target.fido2Credential(kid: "dk-3") == FIDO2Credential(credentialID: "Y3JlZA", signCount: 41))
            #expect(try await target.fido2Credential(kid: "dk-2") == nil)
            let keys = try await target.signingKeys()
            #expect(keys.map(\.kid) == ["kid-1", "kid-2"] && keys.map(\.active) == [false, true])
            #expect(keys.map(\.instance) == ["host-a", "host-a"] && keys[0].revokedAt != nil)
            let copied = try await target.ledgerEntries(afterSeq: 0, limit: total + 1)
            let entries = try await original.ledgerEntries(afterSeq: 0, limit: total + 1)
            #expect(copied.map(\.link) == entries.map(\.link))
            #expect(copied.map(\.peer) == entries.map(\.peer) && copied.map(\.authLevel) == entries.map(\.authLevel))
            #expect(try await target.ledgerCheckpoints(afterSeq: -1, throughSeq: nil).map(\.seq) == [500, 1000, 1500, 2000])
            // The copy goes on as one chain, and knows kid-1 as revoked.
            await #expect(throws: StorageError.signingKeyRevoked("kid-1")) {
                try await target.appendLedger([ledgerAppend(total)])
            }
            var append = ledgerAppend(total)
            append.kid = "kid-2"
            let next = try await target.appendLedger([append])
            #expect(next.map(\.seq) == [Int64(total) + 1])
            #expect(try await target.ledgerRoot(size: Int64(total)) == (try await original.ledgerRoot(size: Int64(total))))
            try await source.close()

            // The tree (SPEC 5.5) is made in Swift, as the log core makes a batch's (issue 40):
            // PostgreSQL keeps every complete subtree, its leaves included, under its storage
            // index, as its append stores them; SQLite the same without the leaves. The
            // import's chunks (more than two pages) and the append after it make one tree.
            var tree = MerkleFrontier()
            var made: [(node: MerkleNode, row: String)] = []
            var roots: [Int64: [UInt8]] = [:]
            for entry in entries + next {
                for (node, hash) in tree.append(leafHash: MerkleHash.leaf(entry.jws.utf8)) {
                    made.append((node, "\(node.storageIndex) \(Hex.encode(hash))"))
                }
                roots[tree.size] = tree.root
            }
            made.sort { $0.node.storageIndex < $1.node.storageIndex }
            let stored = try await PostgresTestServer.administer(
                "SELECT id::text || ' ' || encode(hash, 'hex') FROM ledger_tree ORDER BY id", database: database.name)
            #expect(stored.count == made.count && stored == made.map(\.row), "\(stored.count) rows, \(made.count) made")
            for size in [1, 999, 1000, 1001, 1024, 2000, 2001, total, total + 1] {
                #expect(try await target.ledgerRoot(size: Int64(size)) == roots[Int64(size)], "root of \(size)")
            }
            try await target.close()
            let file = try DatabaseQueue(path: directory.path + "/" + SQLiteStore.fileName)
            let sqliteRows = try await file.read { db in
                try Row.fetchAll(db, sql: "SELECT id, hash FROM ledger_tree ORDER BY id").map { row -> String in
                    let id: Int64 = row[0]
                    let hash: Data = row[1]
                    return "\(id) \(Hex.encode([UInt8](hash)))"
                }
            }
            try file.close()
            let beforeAppend = MerkleNode(level: 0, index: Int64(total)).storageIndex
            #expect(sqliteRows == made.filter { $0.node.level > 0 && $0.node.storageIndex < beforeAppend }.map(\.row))
        }
    }

    @Test func theSourceIsHeldStillWhileOpen() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        let sqlite = try directory.open()
        try await sqlite.addUser(newUser("alice"))
        let source = try SQLiteMigrationSource.open(path: directory.path + "/" + SQLiteStore.fileName, seal: TestSeal.seal, sealUnsealed: false)
        // Another writer (a daemon not stopped) waits out the busy timeout, then fails: nothing
        // changes under the copy.
        await #expect(throws: (any Error).self) { try await sqlite.addUser(newUser("bob")) }
        #expect(try await source.store.listUsers().map(\.name) == ["alice"])
        try await source.close()
        try await sqlite.addUser(newUser("bob"))
        #expect(try await sqlite.listUsers().map(\.name) == ["alice", "bob"])
        try await sqlite.close()
    }

    @Test func noSourceFileIsAnErrorAndNoneIsCreated() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        let path = directory.parent + "/" + SQLiteStore.fileName
        #expect(throws: StorageError.stateFile(path: path, errno: ENOENT)) { try SQLiteMigrationSource.open(path: path, seal: TestSeal.seal, sealUnsealed: false) }
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}

/// What approval by several people rests on (SPEC §3.4) and the idempotencyKeys of signing
/// requests (SPEC §3) move too: groups, requests with their votes and their binding to the
/// log, sealed again under the target's key; a record that fails its seal in the source is
/// carried over failing, never sealed again, and reported.
extension SQLiteToPostgresMigrationTests {
    static let rule = ApprovalRuleSnapshot(approvers: ["group:treasury"], required: 2, level: 1, type: 0, key: "rule-1")

    static func request(_ id: String) -> ApprovalRecord {
        ApprovalRecord(id: id, requester: "alice", payload: "pay 100 EUR", payloadLength: 11, reason: "payment: invoice 7",
                       authLevel: 1, authenticatorType: 0, authenticatorUsed: "password",
                       peer: LedgerPeer(uid: 1000, pid: 42, comm: "payroll"), rule: rule,
                       createdAt: epoch.addingTimeInterval(0.123456789), expiresAt: epoch.addingTimeInterval(3600))
    }

    static func vote(_ approver: String, seconds: Double) -> ApprovalVote {
        ApprovalVote(approver: approver, authLevel: 1, authenticator: "password", at: epoch.addingTimeInterval(seconds))
    }

    static func claim(_ key: String, ids: [Int], pendingSeconds: Double = 60) -> IdempotencyClaim {
        IdempotencyClaim(peerUID: 1000, key: key, digest: Data(repeating: UInt8(key.count), count: 32),
                         signatureIDs: ids.map { ledgerAppend($0).signatureID },
                         pendingUntil: epoch.addingTimeInterval(pendingSeconds), expiresAt: epoch.addingTimeInterval(86_400))
    }

    @Test func groupsRequestsForApprovalAndIdempotencyKeysMoveSealedAgain() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        let sqlite = try directory.open()
        for name in ["alice", "bob", "carol", "dave"] { try await sqlite.addUser(newUser(name)) }
        _ = try await sqlite.appendLedger(ledgerBatch(0..<3))
        // Which groups hold: bob and carol in treasury; dave in audit, moved into treasury by
        // someone without the seal key.
        for (group, user) in [("treasury", "bob"), ("treasury", "carol"), ("audit", "dave")] {
            try await sqlite.addGroupMember(GroupMember(group: group, user: user, addedSeq: 2))
        }
        try await sqlite.executeRawSQL("UPDATE group_members SET group_name = 'treasury' WHERE user_name = 'dave'")
        // A pending request with one approval; a denied one bound to its event in the log; one
        // whose payload was changed behind the daemon's back.
        let pending = "0190a0b0-0000-7000-8000-00000000aaa1", denied = "0190a0b0-0000-7000-8000-00000000aaa2"
        let forged = "0190a0b0-0000-7000-8000-00000000aaa3"
        for id in [pending, denied, forged] { try await sqlite.createApproval(Self.request(id)) }
        guard case .counted = try await sqlite.addApprovalVote(id: pending, vote: Self.vote("bob", seconds: 10.5), now: epoch)
        else { throw StorageError.malformedRow(table: "approval_votes", detail: "bob's vote not counted") }
        #expect(try await sqlite.endApproval(id: denied, as: .denied, by: "carol", reason: "no", now: epoch.addingTimeInterval(20)))
        var event = ledgerAppend(3)
        event.authLevel = LedgerAppend.eventAuthLevel
        event.approvalID = denied
        _ = try await sqlite.appendLedger([event])
        try await sqlite.executeRawSQL("UPDATE approvals SET payload = 'pay 100000 EUR' WHERE id = '\(forged)'")
        // A key done (its signature in the ledger), one given up by its owner, one still pending.
        let done = Self.claim("done-1", ids: [1]), released = Self.claim("released-1", ids: [7])
        let open = Self.claim("open-1", ids: [8], pendingSeconds: 1_000_000)
        for claim in [done, released, open] { #expect(try await sqlite.claimIdempotencyKey(claim, now: epoch) == .claimed) }
        try await sqlite.completeIdempotencyKey(done)
        #expect(try await sqlite.releaseIdempotencyKey(released))
        try await sqlite.close()

        try await withPostgresDatabase { database in
            let target = try await database.open()
            let source = try SQLiteMigrationSource.open(path: directory.path + "/" + SQLiteStore.fileName, seal: TestSeal.seal,
                                                        sealUnsealed: false)
            let summary: MigrationSummary
            do {
                summary = try await SQLiteToPostgresMigration(source: source, target: target, checkpointEntries: nil).run()
            } catch {
                try? await source.close()
                try? await target.close()
                throw error
            }
            try await source.close()
            #expect(summary.groupMembers == 3 && summary.approvals == 3 && summary.pendingApprovals == 2)
            #expect(summary.approvalVotes == 1 && summary.idempotencyKeys == 3)
            #expect(summary.unsealedGroupMembers == [GroupMember(group: "treasury", user: "dave", addedSeq: 2)])
            #expect(summary.unsealedApprovals == [forged])

            // The tampered membership is carried over failing: not a member on PostgreSQL either.
            #expect(try await target.groupMembers() == [GroupMember(group: "treasury", user: "bob", addedSeq: 2),
                                                        GroupMember(group: "treasury", user: "carol", addedSeq: 2)])
            let requests = try await target.allApprovals()
            try #require(requests.map(\.id) == [pending, denied, forged])
            #expect(requests.map(\.sealFailure) == [nil, nil, .missing])
            #expect(requests[0].state == .pending && requests[0].votes == [Self.vote("bob", seconds: 10.5)])
            // Times as PostgreSQL keeps them (whole microseconds).
            #expect(abs(requests[0].createdAt.timeIntervalSince(Self.request(pending).createdAt)) < 0.000_001)
            #expect(requests[1].state == .denied && requests[1].decidedBy == "carol" && requests[1].decisionReason == "no")
            // The pending request goes on: carol's approval counts beside bob's.
            guard case let .counted(counted) = try await target.addApprovalVote(id: pending, vote: Self.vote("carol", seconds: 30),
                                                                                now: epoch.addingTimeInterval(30)) else {
                throw StorageError.malformedRow(table: "approval_votes", detail: "carol's vote not counted")
            }
            #expect(counted.distinctApprovers == ["bob", "carol"])
            #expect(try await target.approval(id: pending)?.sealFailure == nil)
            // The forged request is never acted on there either.
            await #expect(throws: StorageError.self) {
                _ = try await target.endApproval(id: forged, as: .denied, by: "bob", reason: "x", now: epoch.addingTimeInterval(40))
            }

            // Keys: a retry of the done one replays its signature; the given-up one is taken over
            // under its signature IDs; the pending one is still in flight.
            let later = epoch.addingTimeInterval(120)
            #expect(try await target.claimIdempotencyKey(done, now: later) == .replay(signatureIDs: done.signatureIDs))
            #expect(try await target.claimIdempotencyKey(Self.claim("released-1", ids: [9]), now: later)
                == .takenOver(signatureIDs: released.signatureIDs))
            #expect(try await target.claimIdempotencyKey(open, now: later) == .inFlight)
            try await target.close()
        }
    }
}

extension SQLiteToPostgresMigrationTests {
    @Test func aTargetWithAGroupMembershipOrAnIdempotencyKeyIsNotEmpty() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        let sqlite = try directory.open()
        try await sqlite.addUser(newUser("alice"))
        try await sqlite.close()
        try await withPostgresDatabase { database in
            let target = try await database.open()
            try await target.addGroupMember(GroupMember(group: "treasury", user: "bob", addedSeq: 1))
            #expect(try await target.claimIdempotencyKey(Self.claim("k-1", ids: [1]), now: epoch) == .claimed)
            let source = try SQLiteMigrationSource.open(path: directory.path + "/" + SQLiteStore.fileName, seal: TestSeal.seal,
                                                        sealUnsealed: false)
            await #expect(throws: PostgresImportError.notEmpty(tables: ["group_members", "idempotency_keys"])) {
                try await SQLiteToPostgresMigration(source: source, target: target, checkpointEntries: nil).run()
            }
            #expect(try await target.listUsers().isEmpty)
            try await source.close()
            try await target.close()
        }
    }
}
