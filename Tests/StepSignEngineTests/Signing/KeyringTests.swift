import Foundation
import Logging
@testable import StepSignEngine
import StepSignCrypto
import StepSignStorage
import Testing
import StepSignTestSupport

/// Whose keys a keyring signs with and publishes (SPEC §2, §5.2), on a real SQLite store and
/// real key files.
@Suite struct KeyringTests {
    private let logger = Logger(label: "test")

    private func withStore(_ body: (SQLiteStore, String) async throws -> Void) async throws {
        let directory = TemporaryDirectory.path("keyring")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore.open(stateDirectory: directory)
        try await body(store, directory)
        try await store.close()
    }

    /// Writes a key file as the daemon does and returns the key.
    private func writeKey(in keys: String) throws -> P256PrivateKey {
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let key = try P256PrivateKey.generate()
        try SecureFile.writeAtomically(Array(try key.pkcs8PEM(passphrase: nil).utf8),
                                       to: "\(keys)/\(key.publicKey.thumbprint).pem", mode: 0o600)
        return key
    }

    @Test("a key from before instances were recorded is this daemon's when its file is here; its public half is filled in")
    func anUpgradedKeyIsKeptAndPublished() async throws {
        try await withStore { store, directory in
            let old = try writeKey(in: directory + "/keys")
            try await store.addSigningKey(kid: old.publicKey.thumbprint, createdAt: Date())
            let keyring = try await Keyring.open(directory: directory + "/keys", instance: "host-a", passphrase: nil,
                                                 store: store, logger: logger)
            #expect(keyring.active.kid == old.publicKey.thumbprint)
            #expect(keyring.keys.count == 1)
            #expect(try await store.signingKeys().first?.publicKeyPEM == old.publicKey.spkiPEM)
            // The first rotation of the named instance retires it.
            let new = try await keyring.rotate()
            let records = try await store.signingKeys()
            #expect(records.filter(\.active).map(\.kid) == [new])
            #expect(records.last?.instance == "host-a")
        }
    }

    @Test("another instance's keys are published from their public halves; one whose half is missing or wrong is left out")
    func otherInstancesKeys() async throws {
        try await withStore { store, directory in
            let elsewhere = TemporaryDirectory.path("keyring-b")
            defer { try? FileManager.default.removeItem(atPath: elsewhere) }
            let good = try writeKey(in: elsewhere)
            let other = try writeKey(in: elsewhere)
            try await store.addSigningKey(kid: good.publicKey.thumbprint, createdAt: Date(), instance: "host-b",
                                          publicKeyPEM: good.publicKey.spkiPEM)
            // A row whose public half is another key's: its kid does not match, so it is not trusted.
            try await store.addSigningKey(kid: "forged-kid", createdAt: Date(), instance: "host-c",
                                          publicKeyPEM: other.publicKey.spkiPEM)
            try await store.addSigningKey(kid: "no-half", createdAt: Date(), instance: "host-d", publicKeyPEM: nil)
            let keyring = try await Keyring.open(directory: directory + "/keys", instance: "host-a", passphrase: nil,
                                                 store: store, logger: logger)
            let own = keyring.active
            #expect(own.isOwn && own.instance == "host-a")
            #expect(Set(keyring.trustedKeys.all.map(\.thumbprint)) == [own.kid, good.publicKey.thumbprint])
            #expect(keyring.keys.first { $0.kid == good.publicKey.thumbprint }?.isOwn == false)
            // Its own directory holds only its own key.
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/keys") == ["\(own.kid).pem"])
        }
    }

    @Test("when another daemon revokes this one's active key, a refresh makes a new one; two refreshes at once make one")
    func refreshReplacesARevokedKey() async throws {
        try await withStore { store, directory in
            let keyring = try await Keyring.open(directory: directory + "/keys", instance: "host-a", passphrase: nil,
                                                 store: store, logger: logger)
            let first = keyring.active.kid
            #expect(try await store.revokeSigningKey(kid: first, at: Date()))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 { group.addTask { try await keyring.refresh() } }
                try await group.waitForAll()
            }
            let records = try await store.signingKeys()
            #expect(records.count == 2)
            #expect(keyring.active.kid != first && keyring.active.kid == records.last?.kid)
            #expect(!keyring.trustedKeys.all.map(\.thumbprint).contains(first))
        }
    }

    @Test("a key the store names for this instance whose file is missing stops the start, naming the cause")
    func aMissingOwnKeyFileIsRefused() async throws {
        try await withStore { store, directory in
            let elsewhere = TemporaryDirectory.path("keyring-c")
            defer { try? FileManager.default.removeItem(atPath: elsewhere) }
            let twin = try writeKey(in: elsewhere)
            try await store.addSigningKey(kid: twin.publicKey.thumbprint, createdAt: Date(), instance: "host-a",
                                          publicKeyPEM: twin.publicKey.spkiPEM)
            let error = await #expect(throws: KeyringError.self) {
                _ = try await Keyring.open(directory: directory + "/keys", instance: "host-a", passphrase: nil,
                                           store: store, logger: logger)
            }
            #expect(error.map { "\($0)" }?.contains("own instance name") == true)
        }
    }
}
