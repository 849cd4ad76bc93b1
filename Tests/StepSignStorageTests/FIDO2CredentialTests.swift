import Foundation
import StepSignStorage
import Testing

/// SPEC §5.7: a FIDO2 security key's signature counter lives in the store, and an assertion is
/// consumed in one transaction there: its nonce used once and the counter raised, which must
/// grow; two daemons answering at once with the same counter get one success.
@Suite("FIDO2 credentials")
struct FIDO2CredentialTests {
    static let until = epoch.addingTimeInterval(60)

    static func key(_ kid: String) -> DeviceKeyRecord {
        DeviceKeyRecord(kid: kid, user: "alice", publicKeyJWK: "{}", label: "security key", createdAt: epoch)
    }

    @Test(arguments: StoreBackend.allCases)
    func aSecurityKeyKeepsItsCredentialAndACounterThatMustGrow(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice"))
            try await store.addFIDO2DeviceKey(Self.key("fido"), credentialID: "Y3JlZA")
            try await store.addDeviceKey(Self.key("plain"))
            #expect(try await store.fido2Credential(kid: "fido") == FIDO2Credential(credentialID: "Y3JlZA", signCount: 0))
            #expect(try await store.fido2Credential(kid: "plain") == nil)
            #expect(try await store.deviceKeys(user: "alice", includeRevoked: false).map(\.kid).sorted() == ["fido", "plain"])

            #expect(try await store.useFIDO2Assertion(kid: "fido", signCount: 5, nonce: "n1", expiresAt: Self.until, now: epoch) == .accepted)
            #expect(try await store.fido2Credential(kid: "fido")?.signCount == 5)
            // The same nonce again: nothing changes, whatever the counter says.
            #expect(try await store.useFIDO2Assertion(kid: "fido", signCount: 9, nonce: "n1", expiresAt: Self.until, now: epoch) == .nonceReused)
            #expect(try await store.fido2Credential(kid: "fido")?.signCount == 5)
            // Equal or lower: a clone or a replay; the counter stays.
            #expect(try await store.useFIDO2Assertion(kid: "fido", signCount: 5, nonce: "n2", expiresAt: Self.until, now: epoch)
                    == .counterDidNotGrow(stored: 5))
            #expect(try await store.useFIDO2Assertion(kid: "fido", signCount: 0, nonce: "n3", expiresAt: Self.until, now: epoch)
                    == .counterDidNotGrow(stored: 5))
            #expect(try await store.useFIDO2Assertion(kid: "fido", signCount: 6, nonce: "n4", expiresAt: Self.until, now: epoch) == .accepted)
            // A plain device key and a revoked security key have no FIDO2 credential to use.
            #expect(try await store.useFIDO2Assertion(kid: "plain", signCount: 1, nonce: "n5", expiresAt: Self.until, now: epoch)
                    == .noSuchCredential)
            #expect(try await store.revokeDeviceKey(user: "alice", kid: "fido", at: epoch))
            #expect(try await store.useFIDO2Assertion(kid: "fido", signCount: 7, nonce: "n6", expiresAt: Self.until, now: epoch)
                    == .noSuchCredential)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func anAuthenticatorThatDoesNotCountStaysAtZero(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice"))
            try await store.addFIDO2DeviceKey(Self.key("fido"), credentialID: "Y3JlZA")
            #expect(try await store.useFIDO2Assertion(kid: "fido", signCount: 0, nonce: "n1", expiresAt: Self.until, now: epoch) == .accepted)
            #expect(try await store.useFIDO2Assertion(kid: "fido", signCount: 0, nonce: "n2", expiresAt: Self.until, now: epoch) == .accepted)
            // Once it has counted, 0 is a counter that went back.
            #expect(try await store.useFIDO2Assertion(kid: "fido", signCount: 1, nonce: "n3", expiresAt: Self.until, now: epoch) == .accepted)
            #expect(try await store.useFIDO2Assertion(kid: "fido", signCount: 0, nonce: "n4", expiresAt: Self.until, now: epoch)
                    == .counterDidNotGrow(stored: 1))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func twoAnswersWithTheSameCounterAtOnceGetOneSuccess(_ backend: StoreBackend) async throws {
        try await withStores(backend, count: 2) { stores in
            try await stores[0].addUser(newUser("alice"))
            try await stores[0].addFIDO2DeviceKey(Self.key("fido"), credentialID: "Y3JlZA")
            let accepted = try await withThrowingTaskGroup(of: FIDO2AssertionUse.self) { group in
                for index in 0..<10 {
                    let store = stores[index % 2]
                    group.addTask {
                        try await store.useFIDO2Assertion(kid: "fido", signCount: 3, nonce: "n\(index)", expiresAt: Self.until, now: epoch)
                    }
                }
                return try await group.reduce(0) { $0 + ($1 == .accepted ? 1 : 0) }
            }
            #expect(accepted == 1)
            #expect(try await stores[1].fido2Credential(kid: "fido")?.signCount == 3)
        }
    }
}
