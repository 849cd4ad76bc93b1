import StepSignSystem
import Foundation
import Logging
@testable import StepSignEngine
import StepSignCrypto
import StepSignFormat
import StepSignProtocol
@testable import StepSignStorage
import Testing
import StepSignTestSupport
import StepSignEngineTestSupport

/// Whose keys a keyring signs with and publishes (SPEC §2, §5.2), on a real SQLite store and
/// real key files.
@Suite struct KeyringTests {
    private let logger = TestLog.logger()

    private func withStore(_ body: (SQLiteStore, String) async throws -> Void) async throws {
        let directory = TemporaryDirectory.path("keyring")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore.open(stateDirectory: directory, seal: try SealKey.stateKey(stateDirectory: directory).seal, sealUnsealed: true)
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

    @Test("another instance's key is published only with an endorsement chain to the cluster root; a row alone, a wrong half or none is not")
    func otherInstancesKeys() async throws {
        try await withStore { store, directory in
            let elsewhere = TemporaryDirectory.path("keyring-b")
            defer { try? FileManager.default.removeItem(atPath: elsewhere) }
            let root = try P256PrivateKey.generate()
            let good = try writeKey(in: elsewhere)
            let other = try writeKey(in: elsewhere)
            try await store.addSigningKey(kid: good.publicKey.thumbprint, createdAt: Date(), instance: "host-b",
                                          publicKeyPEM: good.publicKey.spkiPEM)
            // A row whose public half is another key's: its kid does not match, so it is not trusted.
            try await store.addSigningKey(kid: "forged-kid", createdAt: Date(), instance: "host-c",
                                          publicKeyPEM: other.publicKey.spkiPEM)
            try await store.addSigningKey(kid: "no-half", createdAt: Date(), instance: "host-d", publicKeyPEM: nil)
            let keyring = try await Keyring.open(directory: directory + "/keys", instance: "host-a", passphrase: nil,
                                                 store: store, clusterRoot: root.publicKey, logger: logger)
            let own = keyring.active
            #expect(own.isOwn && own.instance == "host-a" && own.trust == .own)
            // Not endorsed yet: listed, not trusted.
            #expect(keyring.trustedKeys.all.map(\.thumbprint) == [own.kid])
            #expect(keyring.keys.first { $0.kid == good.publicKey.thumbprint }?.trust == .untrusted(reason: "no endorsement"))

            let endorsement = try KeyEndorsement(instance: "host-b", key: good.publicKey, iat: 1).signed(by: root)
            #expect(try await keyring.addEndorsement(endorsement) == good.publicKey.thumbprint)
            #expect(Set(keyring.trustedKeys.all.map(\.thumbprint)) == [own.kid, good.publicKey.thumbprint])
            #expect(keyring.keys.first { $0.kid == good.publicKey.thumbprint }?.trust == .endorsed(endorser: KeyTrust.rootEndorser))
            // An endorsement naming another instance, or not signed by the root, is refused.
            let wrongInstance = try KeyEndorsement(instance: "host-x", key: other.publicKey, iat: 1).signed(by: root)
            await #expect(throws: StepSignError.self) { _ = try await keyring.addEndorsement(wrongInstance) }
            let selfMade = try KeyEndorsement(instance: "host-b", key: good.publicKey, iat: 1).signed(by: other)
            await #expect(throws: StepSignError.self) { _ = try await keyring.addEndorsement(selfMade) }
            // Its own directory holds only its own key (beside the seal key of the credential records).
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/keys").filter { $0.hasSuffix(".pem") }
                == ["\(own.kid).pem"])
        }
    }

    @Test("a key row written into the store is not trusted, with or without a root; an own key file the store lost stays published")
    func ownKeysAreTheFilesInKeys() async throws {
        try await withStore { store, directory in
            let keyring = try await Keyring.open(directory: directory + "/keys", instance: "host-a", passphrase: nil,
                                                 store: store, logger: logger)
            let own = keyring.active.kid
            let forged = try P256PrivateKey.generate()
            // A writer who knows the instance name and marks the row active still gets no trust.
            try await store.addSigningKey(kid: forged.publicKey.thumbprint, createdAt: Date(), instance: "host-z",
                                          publicKeyPEM: forged.publicKey.spkiPEM)
            try await keyring.refresh()
            #expect(keyring.trustedKeys.all.map(\.thumbprint) == [own])
            #expect(keyring.keys.first { $0.kid == forged.publicKey.thumbprint }?.trust.isTrusted == false)
        }
    }

    @Test("a refresh reads no key file it has loaded (an encrypted key is not decrypted again for every getPublicKeys)")
    func refreshDoesNotReloadKnownKeys() async throws {
        try await withStore { store, directory in
            let keyring = try await Keyring.open(directory: directory + "/keys", instance: "host-a", passphrase: nil,
                                                 store: store, logger: logger)
            let kid = keyring.active.kid
            // Were it read again, this file would stop the refresh (not a key, or another kid).
            try Data("not a key".utf8).write(to: URL(fileURLWithPath: directory + "/keys/\(kid).pem"))
            try await keyring.refresh()
            #expect(keyring.active.kid == kid && keyring.active.isOwn)
        }
    }

    @Test("a revocation of an own key is recorded in keys/: clearing the column undoes nothing, and the column is written back")
    func revocationOutlivesAClearedColumn() async throws {
        try await withStore { store, directory in
            let keyring = try await Keyring.open(directory: directory + "/keys", instance: "host-a", passphrase: nil,
                                                 store: store, logger: logger)
            let old = keyring.active.kid
            _ = try await keyring.revoke(kid: old) { _ in 7 }
            #expect(FileManager.default.fileExists(atPath: directory + "/keys/\(old).revoked"))
            try await store.executeRawSQL("UPDATE signing_keys SET revoked_at = NULL WHERE kid = '\(old)'")
            try await keyring.refresh()
            #expect(!keyring.unrevokedKeys.all.map(\.thumbprint).contains(old))
            #expect(keyring.trustedKeys.revokedAt[old] == 7)
            #expect(keyring.keys.first { $0.kid == old }?.revokedAt != nil)
            #expect(try await store.signingKeys().first { $0.kid == old }?.revokedAt != nil)
            // And after a restart.
            try await store.executeRawSQL("UPDATE signing_keys SET revoked_at = NULL WHERE kid = '\(old)'")
            let reopened = try await Keyring.open(directory: directory + "/keys", instance: "host-a", passphrase: nil,
                                                  store: store, logger: logger)
            #expect(!reopened.unrevokedKeys.all.map(\.thumbprint).contains(old))
            #expect(reopened.trustedKeys.revokedAt[old] == 7)
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
            #expect(!keyring.unrevokedKeys.all.map(\.thumbprint).contains(first))
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
