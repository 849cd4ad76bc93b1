#if canImport(Glibc)
import Glibc
import StepSignProtocol
#endif
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import StepSignCrypto
import StepSignStorage
import struct Foundation.Date

/// The signing keys: this daemon's own (one active signer, retired ones kept for
/// verification) and, on a shared database, the public halves of every other daemon's
/// (SPEC §2, §3.2, §5.2). Revoked keys are withdrawn from verification.
///
/// Private keys live in `<state_dir>/keys/<kid>.pem` as PKCS#8 PEM, mode 0600 (encrypted when
/// a passphrase is given), and never leave the host; the store holds every key's metadata,
/// its instance and its public half. A key is this daemon's when the store names its
/// `instance`, or when it has no instance (made before instances were recorded) and its file
/// is here.
public final class Keyring: Sendable {
    /// A key the daemon signs or has signed with, or another daemon's public key.
    public struct Key: Sendable {
        public var kid: String
        public var createdAt: Date
        /// Whether this is the active signer of its instance.
        public var isActive: Bool
        /// When `admin.revokeKey` withdrew it, or nil.
        public var revokedAt: Date?
        /// The daemon instance that holds the private key ("" for keys from before instances
        /// were recorded).
        public var instance: String
        public var publicKey: P256PublicKey
        /// The private key, for this daemon's own keys only.
        var privateKey: P256PrivateKey?

        /// Whether the private key is in this daemon's state directory.
        public var isOwn: Bool { privateKey != nil }
    }

    private struct State {
        /// This daemon's private keys by kid.
        var privateKeys: [String: P256PrivateKey]
        var keys: [Key]
        var active: Key
        /// The own active key's private half (the signer's hot path reads it without a lookup).
        var signer: P256PrivateKey
    }

    private let directory: String
    private let instance: String
    private let passphrase: [UInt8]?
    private let store: any StepSignStore
    private let state: NIOLockedValueBox<State>
    private let mutations = SerialExecutionQueue()
    private let logger: Logger

    private init(directory: String, instance: String, passphrase: [UInt8]?, store: any StepSignStore, state: State,
                 logger: Logger) {
        self.directory = directory
        self.instance = instance
        self.passphrase = passphrase
        self.store = store
        self.state = NIOLockedValueBox(state)
        self.logger = logger
    }

    /// Loads this daemon's keys from `directory` and every other instance's public keys from
    /// the store, making a key for `instance` (the config's `instance`) if it has no active one.
    public static func open(directory: String, instance: String = "", passphrase: [UInt8]?, store: any StepSignStore,
                            logger: Logger) async throws -> Keyring {
        try SecureFile.makeDirectory(directory)
        var records = try await store.signingKeys()
        var privateKeys = try loadOwnKeys(records, directory: directory, instance: instance, passphrase: passphrase,
                                          logger: logger)
        // Keys recorded before the store kept public halves: publish them for the other daemons.
        for record in records where record.publicKeyPEM == nil {
            guard let key = privateKeys[record.kid] else { continue }
            try await store.recordSigningKeyPublicKey(kid: record.kid, publicKeyPEM: key.publicKey.spkiPEM)
        }
        if ownActive(records, privateKeys: privateKeys) == nil {
            let key = try await create(in: directory, instance: instance, passphrase: passphrase, store: store)
            privateKeys[key.publicKey.thumbprint] = key
            logger.notice(records.isEmpty ? "created the first signing key" : "created this instance's signing key",
                          metadata: ["kid": "\(key.publicKey.thumbprint)", "instance": "\(instance)"])
            records = try await store.signingKeys()
        }
        let state = try makeState(records, privateKeys: privateKeys, logger: logger)
        return Keyring(directory: directory, instance: instance, passphrase: passphrase, store: store, state: state,
                       logger: logger)
    }

    /// Reads the private key of every record that is this daemon's, checking each against its
    /// kid.
    private static func loadOwnKeys(_ records: [SigningKeyRecord], directory: String, instance: String,
                                    passphrase: [UInt8]?, logger: Logger) throws -> [String: P256PrivateKey] {
        var privateKeys: [String: P256PrivateKey] = [:]
        for record in records {
            let path = "\(directory)/\(record.kid).pem"
            let named = record.instance == instance
            guard named || (record.instance.isEmpty && access(path, F_OK) == 0) else { continue }
            let bytes: [UInt8]
            do {
                bytes = try SecureFile.read(path)
            } catch {
                throw KeyringError.missingKeyFile(path: path, instance: record.instance, reason: "\(error)")
            }
            let pem = String(decoding: bytes, as: UTF8.self)
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
            guard privateKey.publicKey.thumbprint == record.kid else {
                throw KeyringError.kidMismatch(path: path, expected: record.kid, found: privateKey.publicKey.thumbprint)
            }
            privateKeys[record.kid] = privateKey
        }
        return privateKeys
    }

    /// The kid of this daemon's active, unrevoked key, if it has one.
    private static func ownActive(_ records: [SigningKeyRecord], privateKeys: [String: P256PrivateKey]) -> String? {
        records.last { $0.active && $0.revokedAt == nil && privateKeys[$0.kid] != nil }?.kid
    }

    /// The keys as the store lists them, own ones with their private halves. Another
    /// instance's key without a usable public half is left out (and logged): it cannot be
    /// published or checked.
    private static func makeState(_ records: [SigningKeyRecord], privateKeys: [String: P256PrivateKey],
                                  logger: Logger) throws -> State {
        var keys: [Key] = []
        for record in records {
            let publicKey: P256PublicKey
            let privateKey = privateKeys[record.kid]
            if let privateKey {
                publicKey = privateKey.publicKey
            } else if let pem = record.publicKeyPEM, let key = try? P256PublicKey(spkiPEM: pem), key.thumbprint == record.kid {
                publicKey = key
            } else {
                logger.error("the store lists a signing key without a usable public key; it is not published",
                             metadata: ["kid": "\(record.kid)", "instance": "\(record.instance)"])
                continue
            }
            keys.append(Key(kid: record.kid, createdAt: record.createdAt, isActive: record.active && record.revokedAt == nil,
                            revokedAt: record.revokedAt, instance: record.instance, publicKey: publicKey,
                            privateKey: privateKey))
        }
        guard let active = keys.last(where: { $0.isActive && $0.isOwn }), let signer = active.privateKey else {
            throw KeyringError.noActiveKey
        }
        return State(privateKeys: privateKeys, keys: keys, active: active, signer: signer)
    }

    /// Writes a new key file, then records it, with its public half, as the instance's active
    /// key.
    ///
    /// Generating, encrypting and writing the key (two `fsync`s) block, so they run on
    /// `NIOThreadPool`, never on the event loop that serves the admin's connection.
    private static func create(in directory: String, instance: String, passphrase: [UInt8]?,
                               store: any StepSignStore) async throws -> P256PrivateKey {
        let key = try await NIOThreadPool.singleton.runIfActive { () throws -> P256PrivateKey in
            let key = try P256PrivateKey.generate()
            let pem = try key.pkcs8PEM(passphrase: passphrase)
            try SecureFile.writeAtomically(Array(pem.utf8), to: "\(directory)/\(key.publicKey.thumbprint).pem", mode: 0o600)
            return key
        }
        try await store.addSigningKey(kid: key.publicKey.thumbprint, createdAt: Date(), instance: instance,
                                      publicKeyPEM: key.publicKey.spkiPEM)
        return key
    }

    /// The key new signatures are made with.
    public var active: Key { state.withLockedValue { $0.active } }

    /// The active key's kid and private half, for the signer.
    var signer: (kid: String, key: P256PrivateKey) { state.withLockedValue { ($0.active.kid, $0.signer) } }

    /// Every key as last read from the store, oldest first: retired, revoked and other
    /// instances' keys included.
    public var keys: [Key] { state.withLockedValue { $0.keys } }

    /// Public keys for verifiers: every instance's active and retired keys; revoked keys left out.
    public var trustedKeys: TrustedKeys { TrustedKeys(keys: keys.filter { $0.revokedAt == nil }.map(\.publicKey)) }

    /// Reads the keys from the store again: other daemons' new keys and revocations. If this
    /// daemon's active key has been revoked (by another daemon), makes a new one.
    public func refresh() async throws {
        try await mutations.run { try await self.reload(rotatingIfRevoked: true) }
    }

    private func reload(rotatingIfRevoked: Bool) async throws {
        var records = try await store.signingKeys()
        var privateKeys = state.withLockedValue { $0.privateKeys }
        if Self.ownActive(records, privateKeys: privateKeys) == nil, rotatingIfRevoked {
            let key = try await Self.create(in: directory, instance: instance, passphrase: passphrase, store: store)
            privateKeys[key.publicKey.thumbprint] = key
            logger.notice("this instance's signing key was revoked elsewhere; made a new one",
                          metadata: ["kid": "\(key.publicKey.thumbprint)"])
            records = try await store.signingKeys()
        }
        let new = try Self.makeState(records, privateKeys: privateKeys, logger: logger)
        state.withLockedValue { $0 = new }
    }

    /// Makes a new key this daemon's active signer; the old ones stay published. Returns the
    /// new kid.
    public func rotate() async throws -> String {
        try await mutations.run { try await self.rotateNow() }
    }

    private func rotateNow() async throws -> String {
        let key = try await Self.create(in: directory, instance: instance, passphrase: passphrase, store: store)
        state.withLockedValue { $0.privateKeys[key.publicKey.thumbprint] = key }
        try await reload(rotatingIfRevoked: false)
        logger.notice("rotated the signing key", metadata: ["kid": "\(key.publicKey.thumbprint)"])
        return key.publicKey.thumbprint
    }

    /// Withdraws a (compromised) key at once, this daemon's or another instance's: rotates
    /// first if it is this daemon's active key, then marks it revoked in the store, so it
    /// leaves the published keys of every daemon and its signatures stop verifying. Another
    /// instance whose active key this was gets its next ledger row refused and makes a new
    /// key (``refresh()``). Returns this daemon's active kid afterwards. Throws
    /// ``StepSignError`` 4 for an unknown or already revoked kid.
    public func revoke(kid: String, now: Date = Date()) async throws -> String {
        try await mutations.run {
            try await self.reload(rotatingIfRevoked: true)
            guard let key = self.keys.first(where: { $0.kid == kid }) else {
                throw StepSignError.invalid("no signing key \"\(kid)\"")
            }
            guard key.revokedAt == nil else { throw StepSignError.invalid("key \"\(kid)\" is already revoked") }
            if key.isActive, key.isOwn { _ = try await self.rotateNow() }
            guard try await self.store.revokeSigningKey(kid: kid, at: now) else {
                throw StepSignError.invalid("key \"\(kid)\" is already revoked")
            }
            try await self.reload(rotatingIfRevoked: false)
            self.logger.notice("revoked a signing key", metadata: [
                "kid": "\(kid)", "instance": "\(key.instance)", "activeKid": "\(self.active.kid)",
            ])
            return self.active.kid
        }
    }
}

/// Why the keyring could not be loaded.
public enum KeyringError: Error, CustomStringConvertible {
    case kidMismatch(path: String, expected: String, found: String)
    /// The store lists a key of this daemon's instance whose file is not in its state
    /// directory: a lost file, or another daemon on the same database with the same `instance`.
    case missingKeyFile(path: String, instance: String, reason: String)
    case noActiveKey
    /// The key file could not be read as a key: encrypted without a passphrase, a wrong
    /// passphrase, or damage. Names the file, never the passphrase.
    case unreadableKey(path: String, reason: P256KeyError)

    public var description: String {
        switch self {
        case let .kidMismatch(path, expected, found):
            "key file \(path) holds key \(found), but the store lists it as \(expected)"
        case let .missingKeyFile(path, instance, reason):
            "the store lists key file \(path) as held by instance \"\(instance)\", but it cannot be read (\(reason)); "
                + "every daemon sharing a database needs its own instance name"
        case .noActiveKey: "the store lists signing keys but none of this daemon's is active"
        case let .unreadableKey(path, reason): "key file \(path): \(reason)"
        }
    }
}
