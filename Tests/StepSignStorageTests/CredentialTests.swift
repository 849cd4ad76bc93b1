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
}
