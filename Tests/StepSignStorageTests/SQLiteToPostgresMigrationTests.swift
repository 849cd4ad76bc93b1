import Foundation
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
            try await source.close()
            try await target.close()
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
