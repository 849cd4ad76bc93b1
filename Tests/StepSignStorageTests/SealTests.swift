import Foundation
import Testing
@testable import StepSignStorage

/// Sealed credential records (SPEC §5.4), tried as someone who can write the database but does
/// not hold the seal key: whatever they write or put back is never used, on both backends.
@Suite struct SealTests {
    /// An event of `user` appended to the ledger, as the engine records a credential change.
    private func appendEvent(_ store: any StepSignStore, user: String, index: Int) async throws {
        var event = ledgerAppend(index, user: user)
        event.authLevel = LedgerAppend.eventAuthLevel
        _ = try await store.appendLedger([event])
    }

    /// The sealed columns of a user row, for copying a row and putting the copy back.
    private let sealedColumns = """
        password_hash, password_changed_at, password_expired, must_change_password, blocked, blocked_until, \
        credential_token, event_index, history_digest, device_keys_digest, seal
        """

    @Test(arguments: StoreBackend.allCases)
    func recordsTheStoreWroteAreSealedAndCurrent(_ backend: StoreBackend) async throws {
        try await withTamperableStore(backend) { store, _ in
            try await store.addUser(newUser("alice"))
            try await appendEvent(store, user: "alice", index: 1)
            try await store.setPassword(user: "alice", hash: "scrypt$second", at: epoch, historyLimit: 3)
            try await appendEvent(store, user: "alice", index: 2)
            try await store.addDeviceKey(DeviceKeyRecord(kid: "k1", user: "alice", publicKeyJWK: "{}", label: "phone", createdAt: epoch))
            #expect(try await store.revokeDeviceKey(user: "alice", kid: "k1", at: epoch))
            #expect(try await store.wrongAnswer("alice", maxAttempts: 1) == .blocked(byThisAnswer: true))
            #expect(try await store.unlockUser(named: "alice"))
            #expect(try await store.user(named: "alice")?.sealFailure == nil)
            #expect(try await store.listUsers().map(\.sealFailure) == [nil])
            #expect(try await store.attemptCounter(name: "alice", now: epoch).sealFailure == nil)
            #expect(try await store.passwordHistory(user: "alice", limit: 5) == ["scrypt$second", "scrypt$initial"])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aUserInsertedByHandIsNeverUsed(_ backend: StoreBackend) async throws {
        try await withTamperableStore(backend) { store, raw in
            try await raw("""
                INSERT INTO users (name, password_hash, password_changed_at, created_at, credential_token)
                VALUES ('mallory', 'scrypt$known', \(backend == .sqlite ? "1750000000" : "now()"),
                        \(backend == .sqlite ? "1750000000" : "now()"), \(backend == .sqlite ? "x'00'" : "'\\x00'"))
                """)
            #expect(try await store.user(named: "mallory")?.sealFailure == .missing)
            #expect(try await store.user(named: "mallory")?.isBlocked(at: epoch) == true)
            #expect(try await store.attemptCounter(name: "mallory", now: epoch).isBlocked(at: epoch))
            #expect(try await store.reserveAttempt(name: "mallory", maxAttempts: 3, blockSeconds: 0, now: epoch) == .unsealed(.missing))
            await #expect(throws: StorageError.recordSealBroken(user: "mallory", .missing)) {
                try await store.setPassword(user: "mallory", hash: "scrypt$new", at: epoch, historyLimit: 3)
            }
            await #expect(throws: StorageError.recordSealBroken(user: "mallory", .missing)) {
                try await store.unlockUser(named: "mallory")
            }
            #expect(try await store.listUsers().first?.sealFailure == .missing)
            // The admin's way out: remove it.
            #expect(try await store.removeUser(named: "mallory"))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func anOverwrittenPasswordHashIsNeverChecked(_ backend: StoreBackend) async throws {
        try await withTamperableStore(backend) { store, raw in
            try await store.addUser(newUser("alice"))
            try await raw("UPDATE users SET password_hash = 'scrypt$attackers' WHERE name = 'alice'")
            #expect(try await store.user(named: "alice")?.sealFailure == .mismatch)
            #expect(try await store.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch) == .unsealed(.mismatch))
            // Nothing seals it: not a rehash, not a right answer given back, not an event.
            #expect(try await !store.rehashPassword(user: "alice", expected: "scrypt$attackers", replacement: "scrypt$x"))
            try await store.giveBackAttempt(try ReservationID.random(), name: "alice", now: epoch)
            try await appendEvent(store, user: "alice", index: 1)
            #expect(try await store.user(named: "alice")?.sealFailure == .mismatch)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aRecordRolledBackToAnOlderSealedCopyIsNeverUsed(_ backend: StoreBackend) async throws {
        try await withTamperableStore(backend) { store, raw in
            try await store.addUser(newUser("alice", hash: "scrypt$old"))
            try await appendEvent(store, user: "alice", index: 1)
            try await raw("CREATE TABLE users_copy AS SELECT * FROM users WHERE name = 'alice'")
            // The password changes (and is logged); then the attacker puts the old copy back.
            try await store.setPassword(user: "alice", hash: "scrypt$new", at: epoch, historyLimit: 0)
            try await appendEvent(store, user: "alice", index: 2)
            #expect(try await store.user(named: "alice")?.sealFailure == nil)
            try await raw("""
                UPDATE users SET (\(sealedColumns)) = (SELECT \(sealedColumns) FROM users_copy) WHERE name = 'alice'
                """)
            let alice = try #require(try await store.user(named: "alice"))
            #expect(alice.passwordHash == "scrypt$old")
            #expect(alice.sealFailure == .rolledBack(recordIndex: 0, latestIndex: 1))
            #expect(try await store.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch)
                == .unsealed(.rolledBack(recordIndex: 0, latestIndex: 1)))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aBlockClearedByHandStaysABlock(_ backend: StoreBackend) async throws {
        try await withTamperableStore(backend) { store, raw in
            try await store.addUser(newUser("alice"))
            #expect(try await store.wrongAnswer("alice", maxAttempts: 1) == .blocked(byThisAnswer: true))
            try await raw("UPDATE users SET blocked = \(backend == .sqlite ? "0" : "false"), failed_attempts = 0 WHERE name = 'alice'")
            #expect(try await store.attemptCounter(name: "alice", now: epoch).isBlocked(at: epoch))
            #expect(try await store.reserveAttempt(name: "alice", maxAttempts: 1, blockSeconds: 0, now: epoch) == .unsealed(.mismatch))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aDeviceKeyOrHistoryRowWrittenByHandBreaksTheRecord(_ backend: StoreBackend) async throws {
        try await withTamperableStore(backend) { store, raw in
            try await store.addUser(newUser("alice"))
            try await store.addUser(newUser("bob"))
            try await store.addDeviceKey(DeviceKeyRecord(kid: "k1", user: "alice", publicKeyJWK: "{}", label: "phone", createdAt: epoch))
            try await raw("""
                INSERT INTO device_keys (kid, user_name, public_key_jwk, label, created_at)
                VALUES ('evil', 'alice', '{"kty":"EC"}', 'mine', \(backend == .sqlite ? "1750000000" : "now()"))
                """)
            #expect(try await store.deviceKeys(user: "alice", includeRevoked: false).isEmpty)
            #expect(try await store.attemptCounter(name: "alice", now: epoch).sealFailure == .partsChanged)
            #expect(try await store.listUsers().map(\.sealFailure) == [.partsChanged, nil])
            // Un-revoking a key is a change of the record too.
            try await raw("DELETE FROM password_history WHERE user_name = 'bob'")
            try await store.setPassword(user: "bob", hash: "scrypt$second", at: epoch, historyLimit: 3)
            try await raw("DELETE FROM password_history WHERE user_name = 'bob'")
            await #expect(throws: StorageError.recordSealBroken(user: "bob", .partsChanged)) {
                try await store.passwordHistory(user: "bob", limit: 3)
            }
            #expect(try await store.listUsers().map(\.sealFailure) == [.partsChanged, .partsChanged])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aUserAddedAgainAfterARemovalIsNotARollback(_ backend: StoreBackend) async throws {
        try await withTamperableStore(backend) { store, _ in
            try await store.addUser(newUser("alice"))
            try await appendEvent(store, user: "alice", index: 1)
            #expect(try await store.removeUser(named: "alice"))
            try await appendEvent(store, user: "alice", index: 2)
            try await store.addUser(newUser("alice"))
            #expect(try await store.user(named: "alice")?.sealFailure == nil)
            try await appendEvent(store, user: "alice", index: 3)
            #expect(try await store.user(named: "alice")?.sealFailure == nil)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func anActivationCodeWrittenByHandIsNeverAccepted(_ backend: StoreBackend) async throws {
        try await withTamperableStore(backend) { store, raw in
            try await store.addUser(newUser("alice"))
            let expires = epoch.addingTimeInterval(600)
            _ = try await store.issueActivationCode(ActivationCodeRecord(user: "alice", codeHash: "h1", verificationKey: "v", expiresAt: expires),
                                                    maxCodesPerHour: 5, now: epoch)
            #expect(try await store.activationCode(user: "alice")?.codeHash == "h1")
            try await raw("UPDATE activation_codes SET code_hash = 'attackers' WHERE user_name = 'alice'")
            #expect(try await store.activationCode(user: "alice") == nil)
            #expect(try await !store.consumeActivationCode(user: "alice", codeHash: "attackers", now: epoch))
        }
    }

    @Test func anotherSealKeyIsRefusedAndUnsealedRowsAreSealedOnlyOnTheUpgrade() async throws {
        try await withStore { store, directory in
            try await store.addUser(newUser("alice"))
            try await store.executeRawSQL("UPDATE users SET seal = NULL WHERE name = 'alice'")
            try await store.close()
            let other = try CredentialSeal(key: [UInt8](repeating: 1, count: CredentialSeal.keyLength))
            #expect(throws: StorageError.sealKeyMismatch) {
                try SQLiteStore.open(stateDirectory: directory.path, seal: other, sealUnsealed: true)
            }
            // The same key again, even claiming to be new: the row stays unsealed.
            let again = try SQLiteStore.open(stateDirectory: directory.path, seal: TestSeal.seal, sealUnsealed: true)
            #expect(try await again.user(named: "alice")?.sealFailure == .missing)
            // An upgrade: no check value yet, the key new: every record is sealed.
            try await again.executeRawSQL("DELETE FROM store_secrets WHERE name = 'seal_check'")
            try await again.close()
            let upgraded = try SQLiteStore.open(stateDirectory: directory.path, seal: other, sealUnsealed: true)
            #expect(try await upgraded.user(named: "alice")?.sealFailure == nil)
            try await upgraded.close()
            try await SQLiteStore.open(stateDirectory: directory.path, seal: other, sealUnsealed: false).close()
        }
    }
}
