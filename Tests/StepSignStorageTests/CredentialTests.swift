import Foundation
import Testing
@testable import StepSignStorage

@Suite struct DeviceKeyTests {
    func key(_ kid: String, user: String = "alice", at offset: Double = 0) -> DeviceKeyRecord {
        DeviceKeyRecord(kid: kid, user: user, publicKeyJWK: #"{"kty":"EC","kid":"\#(kid)"}"#, label: "device \(kid)", createdAt: epoch.addingTimeInterval(offset))
    }

    @Test(arguments: StoreBackend.allCases)
    func deviceKeysAreListedOldestFirstAndRevokedOnesOnlyOnRequest(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            try await store.addUser(newUser("alice"))
            try await store.addDeviceKey(key("k1", at: 0))
            try await store.addDeviceKey(key("k2", at: 1))
            #expect(try await store.deviceKeys(user: "alice", includeRevoked: false) == [key("k1", at: 0), key("k2", at: 1)])

            let revokedAt = epoch.addingTimeInterval(5)
            #expect(try await store.revokeDeviceKey(user: "alice", kid: "k1", at: revokedAt))
            #expect(try await store.deviceKeys(user: "alice", includeRevoked: false).map(\.kid) == ["k2"])
            let all = try await store.deviceKeys(user: "alice", includeRevoked: true)
            #expect(all.map(\.kid) == ["k1", "k2"])
            #expect(all.first?.revokedAt == revokedAt)

            // Revoking twice, another user's key or an unknown key changes nothing.
            #expect(try await !store.revokeDeviceKey(user: "alice", kid: "k1", at: revokedAt))
            #expect(try await !store.revokeDeviceKey(user: "bob", kid: "k2", at: revokedAt))
            #expect(try await !store.revokeDeviceKey(user: "alice", kid: "k9", at: revokedAt))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aDeviceKeyIdCanBeEnrolledOnlyOnce(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            try await store.addUser(newUser("alice"))
            try await store.addUser(newUser("bob"))
            try await store.addDeviceKey(key("k1"))
            await #expect(throws: StorageError.deviceKeyExists("k1")) {
                try await store.addDeviceKey(key("k1", user: "bob"))
            }
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aDeviceKeyNeedsAnExistingUser(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            await #expect(throws: StorageError.noSuchUser("nobody")) {
                try await store.addDeviceKey(key("k1", user: "nobody"))
            }
        }
    }
}

@Suite struct ActivationCodeTests {
    @Test(arguments: StoreBackend.allCases)
    func aNewActivationCodeReplacesTheOpenOne(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            try await store.addUser(newUser("alice"))
            let first = ActivationCodeRecord(user: "alice", codeHash: "c1", verificationKey: "v1", expiresAt: epoch)
            try await store.putActivationCode(first)
            #expect(try await store.activationCode(user: "alice") == first)

            let second = ActivationCodeRecord(user: "alice", codeHash: "c2", verificationKey: "v2", expiresAt: epoch.addingTimeInterval(600))
            try await store.putActivationCode(second)
            #expect(try await store.activationCode(user: "alice") == second)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aDeletedActivationCodeIsGone(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            try await store.addUser(newUser("alice"))
            try await store.putActivationCode(ActivationCodeRecord(user: "alice", codeHash: "c", verificationKey: "v", expiresAt: epoch))
            #expect(try await store.deleteActivationCode(user: "alice"))
            #expect(try await store.activationCode(user: "alice") == nil)
            #expect(try await !store.deleteActivationCode(user: "alice"))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func anActivationCodeNeedsAnExistingUser(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            await #expect(throws: StorageError.noSuchUser("nobody")) {
                try await store.putActivationCode(ActivationCodeRecord(user: "nobody", codeHash: "c", verificationKey: "v", expiresAt: epoch))
            }
        }
    }
}

@Suite struct SigningKeyTests {
    @Test(arguments: StoreBackend.allCases)
    func theNewestSigningKeyIsTheOnlyActiveOne(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            #expect(try await store.signingKeys().isEmpty)
            try await store.addSigningKey(kid: "k1", createdAt: epoch)
            #expect(try await store.signingKeys() == [SigningKeyRecord(kid: "k1", createdAt: epoch, active: true)])

            try await store.addSigningKey(kid: "k2", createdAt: epoch.addingTimeInterval(1))
            try await store.addSigningKey(kid: "k3", createdAt: epoch.addingTimeInterval(2))
            let keys = try await store.signingKeys()
            #expect(keys.map(\.kid) == ["k1", "k2", "k3"])
            #expect(keys.filter(\.active).map(\.kid) == ["k3"])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aKnownSigningKeyCannotBeAddedAgain(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            try await store.addSigningKey(kid: "k1", createdAt: epoch)
            try await store.addSigningKey(kid: "k2", createdAt: epoch)
            await #expect(throws: StorageError.signingKeyExists("k1")) {
                try await store.addSigningKey(kid: "k1", createdAt: epoch)
            }
            #expect(try await store.signingKeys().filter(\.active).map(\.kid) == ["k2"])
        }
    }

    @Test("each daemon instance has its own active key; a rotation touches only its instance's keys (SPEC §5.2)",
          arguments: StoreBackend.allCases)
    func oneActiveKeyPerInstance(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            try await store.addSigningKey(kid: "a1", createdAt: epoch, instance: "host-a", publicKeyPEM: "PEM a1")
            try await store.addSigningKey(kid: "b1", createdAt: epoch.addingTimeInterval(1), instance: "host-b", publicKeyPEM: "PEM b1")
            try await store.addSigningKey(kid: "a2", createdAt: epoch.addingTimeInterval(2), instance: "host-a", publicKeyPEM: "PEM a2")
            let keys = try await store.signingKeys()
            #expect(keys.map(\.kid) == ["a1", "b1", "a2"])
            #expect(keys.filter(\.active).map(\.kid) == ["b1", "a2"])
            #expect(keys.map(\.instance) == ["host-a", "host-b", "host-a"])
            #expect(keys.map(\.publicKeyPEM) == ["PEM a1", "PEM b1", "PEM a2"])
        }
    }

    @Test("a key from before instances were recorded is retired by the first rotation of a named instance",
          arguments: StoreBackend.allCases)
    func anUnnamedKeyBelongsToTheRotatingInstance(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            try await store.addSigningKey(kid: "old", createdAt: epoch)
            try await store.addSigningKey(kid: "new", createdAt: epoch.addingTimeInterval(1), instance: "host-a", publicKeyPEM: nil)
            #expect(try await store.signingKeys().filter(\.active).map(\.kid) == ["new"])
        }
    }

    @Test("a missing public half is filled in once, never overwritten", arguments: StoreBackend.allCases)
    func thePublicHalfIsFilledInOnce(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            try await store.addSigningKey(kid: "k1", createdAt: epoch)
            #expect(try await store.signingKeys().first?.publicKeyPEM == nil)
            try await store.recordSigningKeyPublicKey(kid: "k1", publicKeyPEM: "PEM 1")
            try await store.recordSigningKeyPublicKey(kid: "k1", publicKeyPEM: "PEM 2")
            #expect(try await store.signingKeys().first?.publicKeyPEM == "PEM 1")
        }
    }

    @Test("the store refuses ledger rows and checkpoints signed with a revoked key, and writes nothing of the batch",
          arguments: StoreBackend.allCases)
    func rowsOfARevokedKeyAreRefused(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            // ledgerAppend(_:) rows all carry one kid.
            let kid = try #require(ledgerBatch(1..<2).first?.kid)
            try await store.addSigningKey(kid: kid, createdAt: epoch)
            let first = try await store.appendLedger(ledgerBatch(1..<3))
            #expect(try await store.revokeSigningKey(kid: kid, at: epoch.addingTimeInterval(1)))
            await #expect(throws: StorageError.signingKeyRevoked(kid)) {
                _ = try await store.appendLedger(ledgerBatch(3..<5))
            }
            await #expect(throws: StorageError.signingKeyRevoked(kid)) {
                try await store.appendCheckpoint(LedgerCheckpointRecord(seq: 2, entryHash: first[1].entryHash, kid: kid,
                                                                        jws: "a.b.c", createdAt: epoch))
            }
            #expect(try await store.ledgerCount() == 2)
            #expect(try await store.ledgerCheckpoints(afterSeq: 0, throughSeq: nil).isEmpty)
        }
    }

    /// SQLite checks each kid of a batch once (schema v18) instead of every row by trigger:
    /// the revoked kid need not be the first row's, and nothing of the batch is written.
    @Test("a batch with one row of a revoked key among rows of a live key is refused whole",
          arguments: StoreBackend.allCases)
    func oneRevokedRowRefusesItsBatch(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            let live = try #require(ledgerBatch(1..<2).first?.kid)
            let revoked = "kid-revoked-in-the-middle"
            try await store.addSigningKey(kid: live, createdAt: epoch)
            try await store.addSigningKey(kid: revoked, createdAt: epoch)
            #expect(try await store.revokeSigningKey(kid: revoked, at: epoch.addingTimeInterval(1)))
            var batch = ledgerBatch(1..<6)
            batch[3].kid = revoked
            await #expect(throws: StorageError.signingKeyRevoked(revoked)) {
                _ = try await store.appendLedger(batch)
            }
            #expect(try await store.ledgerCount() == 0)
            // The live key's rows alone go in.
            batch.remove(at: 3)
            #expect(try await store.appendLedger(batch).count == 4)
        }
    }
}
