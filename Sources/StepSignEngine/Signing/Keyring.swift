import Logging
import NIOConcurrencyHelpers
import NIOPosix
import StepSignCrypto
import StepSignStorage
import struct Foundation.Date

/// The daemon's signing keys: one active signer, retired keys kept for verification, revoked
/// keys withdrawn from verification (SPEC §2, §3.2 `admin.revokeKey`).
///
/// Private keys live in `<state_dir>/keys/<kid>.pem` as PKCS#8 PEM, mode 0600 (encrypted when
/// a passphrase is given); which key is active, and when each was made, is in the store.
public final class Keyring: Sendable {
    /// A key the daemon signs or has signed with.
    public struct Key: Sendable {
        public var kid: String
        public var createdAt: Date
        public var isActive: Bool
        /// When `admin.revokeKey` withdrew it, or nil.
        public var revokedAt: Date?
        /// The daemon instance that made it ("" for keys from before instances were recorded).
        public var instance: String
        public var publicKey: P256PublicKey
        var privateKey: P256PrivateKey
    }

    private struct State {
        var keys: [Key]
        var active: Key
    }

    private let directory: String
    private let instance: String
    private let passphrase: [UInt8]?
    private let store: any StepSignStore
    private let state: NIOLockedValueBox<State>
    private let logger: Logger

    private init(directory: String, instance: String, passphrase: [UInt8]?, store: any StepSignStore, keys: [Key], active: Key,
                 logger: Logger) {
        self.directory = directory
        self.instance = instance
        self.passphrase = passphrase
        self.store = store
        self.state = NIOLockedValueBox(State(keys: keys, active: active))
        self.logger = logger
    }

    /// Loads every key the store lists from `directory`, creating the first key if there is none.
    /// New keys are recorded as held by `instance` (the config's `instance`).
    public static func open(directory: String, instance: String = "", passphrase: [UInt8]?, store: any StepSignStore,
                            logger: Logger) async throws -> Keyring {
        try SecureFile.makeDirectory(directory)
        var records = try await store.signingKeys()
        if records.isEmpty {
            let created = try await create(in: directory, instance: instance, passphrase: passphrase, store: store)
            logger.notice("created the first signing key", metadata: ["kid": "\(created.kid)"])
            records = try await store.signingKeys()
        }
        var keys: [Key] = []
        for record in records {
            let path = "\(directory)/\(record.kid).pem"
            let pem = String(decoding: try SecureFile.read(path), as: UTF8.self)
            let privateKey: P256PrivateKey
            do {
                privateKey = try P256PrivateKey(pkcs8PEM: pem, passphrase: passphrase)
            } catch {
                throw KeyringError.unreadableKey(path: path, reason: error)
            }
            if passphrase != nil, !pem.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
                logger.warning("key file is not encrypted although a key passphrase is set; rotate the key to retire it",
                               metadata: ["path": "\(path)"])
            }
            let publicKey = privateKey.publicKey
            guard publicKey.thumbprint == record.kid else {
                throw KeyringError.kidMismatch(path: path, expected: record.kid, found: publicKey.thumbprint)
            }
            keys.append(Key(kid: record.kid, createdAt: record.createdAt, isActive: record.active && record.revokedAt == nil,
                            revokedAt: record.revokedAt, instance: record.instance,
                            publicKey: publicKey, privateKey: privateKey))
        }
        guard let active = keys.last(where: \.isActive) else { throw KeyringError.noActiveKey }
        return Keyring(directory: directory, instance: instance, passphrase: passphrase, store: store, keys: keys, active: active,
                       logger: logger)
    }

    /// Writes a new key file, then records it as the active key.
    ///
    /// Generating, encrypting and writing the key (two `fsync`s) block, so they run on
    /// `NIOThreadPool`, never on the event loop that serves the admin's connection.
    private static func create(in directory: String, instance: String, passphrase: [UInt8]?, store: any StepSignStore) async throws -> Key {
        let (key, kid) = try await NIOThreadPool.singleton.runIfActive { () throws -> (P256PrivateKey, String) in
            let key = try P256PrivateKey.generate()
            let kid = key.publicKey.thumbprint
            let pem = try key.pkcs8PEM(passphrase: passphrase)
            try SecureFile.writeAtomically(Array(pem.utf8), to: "\(directory)/\(kid).pem", mode: 0o600)
            return (key, kid)
        }
        let createdAt = Date()
        try await store.addSigningKey(kid: kid, createdAt: createdAt, instance: instance)
        return Key(kid: kid, createdAt: createdAt, isActive: true, revokedAt: nil, instance: instance,
                   publicKey: key.publicKey, privateKey: key)
    }

    /// The key new signatures are made with.
    public var active: Key { state.withLockedValue { $0.active } }

    /// Every key, oldest first, retired ones included.
    public var keys: [Key] { state.withLockedValue { $0.keys } }

    /// Public keys for verifiers: the active key and every retired one; revoked keys left out.
    public var trustedKeys: TrustedKeys { TrustedKeys(keys: keys.filter { $0.revokedAt == nil }.map(\.publicKey)) }

    /// Makes a new key the active signer; the old ones stay published. Returns the new kid.
    public func rotate() async throws -> String {
        let created = try await Self.create(in: directory, instance: instance, passphrase: passphrase, store: store)
        state.withLockedValue { state in
            state.keys = state.keys.map { var key = $0; key.isActive = false; return key } + [created]
            state.active = created
        }
        logger.notice("rotated the signing key", metadata: ["kid": "\(created.kid)"])
        return created.kid
    }

    /// Withdraws a (compromised) key at once: rotates first if it is the active one, then
    /// marks it revoked, so it leaves the published keys and its signatures stop verifying.
    /// Returns the active kid afterwards. Throws ``StepSignError`` 4 for an unknown or
    /// already revoked kid.
    public func revoke(kid: String, now: Date = Date()) async throws -> String {
        guard let key = keys.first(where: { $0.kid == kid }) else { throw StepSignError.invalid("no signing key \"\(kid)\"") }
        guard key.revokedAt == nil else { throw StepSignError.invalid("key \"\(kid)\" is already revoked") }
        if key.isActive { _ = try await rotate() }
        guard try await store.revokeSigningKey(kid: kid, at: now) else {
            throw StepSignError.invalid("key \"\(kid)\" is already revoked")
        }
        state.withLockedValue { state in
            state.keys = state.keys.map { var key = $0; if key.kid == kid { key.revokedAt = now; key.isActive = false }; return key }
        }
        logger.notice("revoked a signing key", metadata: ["kid": "\(kid)", "activeKid": "\(active.kid)"])
        return active.kid
    }
}

/// Why the keyring could not be loaded.
public enum KeyringError: Error, CustomStringConvertible {
    case kidMismatch(path: String, expected: String, found: String)
    case noActiveKey
    /// The key file could not be read as a key: encrypted without a passphrase, a wrong
    /// passphrase, or damage. Names the file, never the passphrase.
    case unreadableKey(path: String, reason: P256KeyError)

    public var description: String {
        switch self {
        case let .kidMismatch(path, expected, found):
            "key file \(path) holds key \(found), but the store lists it as \(expected)"
        case .noActiveKey: "the store lists signing keys but none is active"
        case let .unreadableKey(path, reason): "key file \(path): \(reason)"
        }
    }
}
