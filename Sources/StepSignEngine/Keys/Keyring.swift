#if canImport(Glibc)
import StepSignSystem
import Glibc
#endif
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import StepSignStorage
import struct Foundation.Date

/// The signing keys: this daemon's own (one active signer, retired ones kept for
/// verification) and, on a shared database, the public halves of every other daemon's
/// (SPEC §2, §3.2, §5.2), each with the reason it is trusted or not (SPEC §5.4).
///
/// Private keys live in `<state_dir>/keys/<kid>.pem` (``KeyDirectory``) and never leave the
/// host; the store holds every key's metadata, its instance, its public half and its
/// endorsement. What the daemon trusts is not decided by those rows: its own keys are the
/// files in `keys/`, and another instance's key is trusted only with an endorsement chain
/// ending at the configured cluster root (``EndorsementChain``). A row without one is kept
/// in ``keys`` as untrusted, never published, and logged at critical once. Revocations of
/// own keys are recorded in `keys/` too, so clearing the column undoes nothing.
public final class Keyring: Sendable {
    /// A key the daemon signs or has signed with, or another daemon's public key.
    public struct Key: Sendable {
        public var kid: String
        public var createdAt: Date
        /// Whether this is the active signer of its instance.
        public var isActive: Bool
        /// When `admin.revokeKey` withdrew it, or nil.
        public var revokedAt: Date?
        /// The log index of its revocation event (SPEC §5.4), when revoked and proven: its
        /// signatures below it stay valid. Nil for a key revoked without a proven index, whose
        /// signatures are all withdrawn.
        public var revokedIndex: Int64?
        /// The daemon instance that holds the private key ("" for keys from before instances
        /// were recorded).
        public var instance: String
        public var publicKey: P256PublicKey
        /// Why this daemon trusts the key, or why not.
        public var trust: KeyTrust
        /// Whether the store lists the key (an own key file the store lost is still own).
        public var isRecorded: Bool
        /// The private key, for this daemon's own keys only.
        var privateKey: P256PrivateKey?

        /// Whether the private key is in this daemon's state directory.
        public var isOwn: Bool { privateKey != nil }

        /// Where the private key lives (SPEC §5.7, `admin.listKeys`): "pkcs11" (a token; `keys/`
        /// holds its `CKA_ID`), "file" (`keys/<kid>.pem`), or "" (another instance's key).
        public var location: String {
            guard let privateKey else { return "" }
            return privateKey.tokenID == nil ? "file" : "pkcs11"
        }
    }

    private struct State {
        /// This daemon's private keys by kid, as loaded from `keys/`.
        var ownKeys: [String: KeyDirectory.OwnKey]
        var keys: [Key]
        var active: Key
        /// The own active key's private half (the signer's hot path reads it without a lookup).
        var signer: P256PrivateKey
        /// Whether the active key chains to the cluster root, as another daemon sees it.
        var activeChainsToRoot: Bool
        /// The key this load made, if it made one (no active key of this instance).
        var created: String?
        /// Revocation indexes read from the store and proven from the ledger, by kid: a
        /// ledger entry does not change, so each is proven once.
        var provenIndexes: [String: Int64] = [:]
        /// The revocations the ledger holds, read so far.
        var revocationLog = RevocationLog()
    }

    private let directory: KeyDirectory
    /// The Ed25519 keys of the transparency log's checkpoints (SPEC §5.5, ``LogKey``).
    private let logKeys: NIOLockedValueBox<LogKey>
    private let instance: String
    private let store: any StepSignStore
    private let state: NIOLockedValueBox<State>
    /// The cluster root in force (`[cluster] root_key`), swapped on reload.
    private let root: NIOLockedValueBox<P256PublicKey?>
    /// Untrusted keys already logged at critical, so that a refresh does not repeat them.
    private let reported = NIOLockedValueBox<Set<String>>([])
    /// Keys made because this instance had no active one (at the first start, or after
    /// another daemon revoked it), not yet taken by ``takeCreatedKeys()``.
    private let created = NIOLockedValueBox<[String]>([])
    private let mutations = SerialExecutionQueue()
    private let logger: Logger

    private init(directory: KeyDirectory, logKey: LogKey, instance: String, store: any StepSignStore,
                 root: P256PublicKey?, state: State, logger: Logger) {
        self.directory = directory
        self.logKeys = NIOLockedValueBox(logKey)
        self.instance = instance
        self.store = store
        self.root = NIOLockedValueBox(root)
        self.state = NIOLockedValueBox(state)
        self.logger = logger
    }

    /// Loads this daemon's keys from `directory` and every other instance's public keys from
    /// the store, making a key for `instance` (the config's `instance`) if it has no active
    /// one. `clusterRoot` is the key other instances' keys must chain to (nil: none is
    /// trusted).
    /// `token`: where new keys are made (`[signing] key_store = "pkcs11"`, SPEC §5.7); nil
    /// makes key files. Keys already made stay where they are (a move to a token is a rotation).
    public static func open(directory path: String, instance: String = "", passphrase: [UInt8]?,
                            store: any StepSignStore, clusterRoot: P256PublicKey? = nil,
                            token: PKCS11Token? = nil, logger: Logger) async throws -> Keyring {
        try SecureFile.makeDirectory(path)
        let directory = KeyDirectory(path: path, passphrase: passphrase, token: token)
        let state = try await loadState(directory: directory, instance: instance, store: store,
                                        root: clusterRoot, creating: true, logger: logger)
        let logKey = try LogKey.loadOrCreate(directory: path, passphrase: passphrase, token: token)
        let keyring = Keyring(directory: directory, logKey: logKey, instance: instance, store: store, root: clusterRoot,
                              state: state, logger: logger)
        keyring.created.withLockedValue { $0 += keyring.state.withLockedValue { $0.created }.map { [$0] } ?? [] }
        keyring.reportTrust()
        return keyring
    }

    /// The `keys/` directory, where the daemon keeps what no database writer may change.
    var directoryPath: String { directory.path }

    /// The Ed25519 key that signs the log's checkpoints now.
    var logKey: Ed25519PrivateKey { logKeys.withLockedValue { $0.active } }

    /// Where the active log key lives: "pkcs11" (the token) or "file" (SPEC §5.7).
    public var logKeyLocation: String { logKeys.withLockedValue { $0.location } }

    /// The Ed25519 keys that sign a checkpoint of `size` entries: the active one, and the one a
    /// log-key rotation replaced while the log is within its overlap.
    func logKeys(forSize size: Int64) -> [Ed25519PrivateKey] { logKeys.withLockedValue { $0.signers(forSize: size) } }

    /// The log keys this daemon's checkpoints were ever signed with: the active one, then the
    /// ones rotations retired (published, so older checkpoints keep verifying).
    var allLogKeys: [Ed25519PublicKey] { logKeys.withLockedValue { [$0.active.publicKey] + $0.retired } }

    /// The keys made since the last call because this instance had no active key (the first
    /// key, or a new one after another daemon revoked it); rotations are not among them. The
    /// engine records each as a `signingKeyCreated` event.
    public func takeCreatedKeys() -> [String] {
        created.withLockedValue { kids in
            defer { kids = [] }
            return kids
        }
    }

    /// Reads the key files, the revocation records and the store, makes a key when this
    /// instance has no active one (and `creating`), and decides each key's trust.
    private static func loadState(directory: KeyDirectory, instance: String, store: any StepSignStore,
                                  root: P256PublicKey?, creating: Bool, known: [String: KeyDirectory.OwnKey] = [:],
                                  proven: [String: Int64] = [:], revocationLog: RevocationLog = RevocationLog(),
                                  writtenBack: Bool = false, logger: Logger) async throws -> State {
        var records = try await store.signingKeys()
        var ownKeys = try directory.loadKeys(known: known, logger: logger)
        for record in records where record.instance == instance && record.active && record.revokedAt == nil
            && ownKeys[record.kid] == nil {
            // The store says this instance signs with a key whose file is not here: a lost
            // file, or another daemon on the same database with the same instance.
            throw KeyringError.missingKeyFile(path: directory.tokenKeyFileExists(record.kid) ? directory.tokenFile(for: record.kid)
                                                : directory.file(for: record.kid), instance: record.instance,
                                              reason: "no such file")
        }
        // Keys recorded before the store kept public halves: publish them for the other daemons.
        for record in records where record.publicKeyPEM == nil {
            guard let own = ownKeys[record.kid] else { continue }
            try await store.recordSigningKeyPublicKey(kid: record.kid, publicKeyPEM: own.key.publicKey.spkiPEM)
        }
        let revocations = try await syncRevocations(records, ownKeys: ownKeys, directory: directory, store: store,
                                                    logger: logger)
        var created: String?
        if creating, ownActive(records, ownKeys: ownKeys, revocations: revocations) == nil {
            let endorser = records.last { ownKeys[$0.kid] != nil && revocations[$0.kid] == nil && $0.revokedAt == nil }
                .flatMap { ownKeys[$0.kid]?.key }
            let key = try await create(in: directory, instance: instance, endorser: endorser, store: store)
            ownKeys[key.publicKey.thumbprint] = KeyDirectory.OwnKey(key: key, modified: Date())
            created = key.publicKey.thumbprint
            logger.notice(records.isEmpty ? "created the first signing key" : "created this instance's signing key",
                          metadata: ["kid": "\(key.publicKey.thumbprint)", "instance": "\(instance)"])
            records = try await store.signingKeys()
        }
        var state = try makeState(records, ownKeys: ownKeys, revocations: revocations, instance: instance, root: root,
                                  logger: logger)
        state.created = created
        state.provenIndexes = proven
        try await proveRevocationIndexes(&state, claimed: records, revocations: revocations, store: store, logger: logger)
        // Revocations are signed events (SPEC §5.4): a column cleared in the database is
        // written back, and everything above is decided again from the store as corrected.
        var log = revocationLog
        try await log.catchUp(store: store, verifiers: TrustedKeys(keys: state.keys.filter { $0.trust.isTrusted }.map(\.publicKey)))
        if !writtenBack, try await writeBackRevocations(log, records: records, store: store, logger: logger) {
            return try await loadState(directory: directory, instance: instance, store: store, root: root, creating: creating,
                                       known: known, proven: state.provenIndexes, revocationLog: log, writtenBack: true,
                                       logger: logger)
        }
        state.revocationLog = log
        return state
    }

    /// Writes back into the store each revocation the log holds that the store does not show
    /// (a cleared `revoked_at`, or no index), logging a cleared one at critical. Returns
    /// whether it wrote any.
    private static func writeBackRevocations(_ log: RevocationLog, records: [SigningKeyRecord], store: any StepSignStore,
                                             logger: Logger) async throws -> Bool {
        var wrote = false
        for record in records {
            guard let revocation = log.revocations[record.kid], record.revokedAt == nil || record.revokedIndex == nil else {
                continue
            }
            if record.revokedAt == nil {
                logger.critical("the store shows a signing key as not revoked, but the log holds its signed revocation; it stays revoked and the column is written back", metadata: ["kid": "\(record.kid)", "instance": "\(record.instance)", "logIndex": "\(revocation.logIndex)"])
            }
            _ = try await store.revokeSigningKey(kid: record.kid, at: record.revokedAt ?? revocation.at,
                                                 logIndex: revocation.logIndex)
            wrote = true
        }
        return wrote
    }

    /// Keeps a revocation's log index only where the ledger holds, at that index, a revocation
    /// event of that key signed by a trusted key (SPEC §5.4): a column a database writer set
    /// to a later index would otherwise make the key's later signatures look valid. An own
    /// key's index recorded in `keys/` needs no proof. A claim that fails is dropped (all the
    /// key's signatures are withdrawn) and logged at critical.
    private static func proveRevocationIndexes(_ state: inout State, claimed records: [SigningKeyRecord],
                                               revocations: [String: KeyDirectory.Revocation], store: any StepSignStore,
                                               logger: Logger) async throws {
        let claims = Dictionary(records.compactMap { record in record.revokedIndex.map { (record.kid, $0) } },
                                uniquingKeysWith: { first, _ in first })
        let verifiers = TrustedKeys(keys: state.keys.filter { $0.trust.isTrusted }.map(\.publicKey))
        for index in state.keys.indices where state.keys[index].revokedAt != nil {
            let kid = state.keys[index].kid
            if let recorded = revocations[kid]?.logIndex {
                state.keys[index].revokedIndex = recorded
                continue
            }
            guard let claim = claims[kid] else { continue }
            if state.provenIndexes[kid] == claim {
                state.keys[index].revokedIndex = claim
                continue
            }
            let entry = try await store.ledgerEntries(afterSeq: claim, limit: 1).first
            let event = entry.flatMap { entry in entry.seq == claim + 1 ? try? LedgerEvent.verify(entry.jws, trustedKeys: verifiers).event : nil }
            if let event, event.kind == .signingKeyRevoked, event.detail("kid") == kid {
                state.keys[index].revokedIndex = claim
                state.provenIndexes[kid] = claim
            } else {
                logger.critical("the store gives a revoked key a log index where the ledger holds no revocation of it; all of the key's signatures are withdrawn", metadata: ["kid": "\(kid)", "claimedIndex": "\(claim)"])
            }
        }
    }

    /// Makes the store and `keys/` agree on which own keys are revoked, in the direction that
    /// never un-revokes: a revocation the store shows (made through another daemon) is
    /// recorded in `keys/`; one recorded in `keys/` that the store no longer shows (a cleared
    /// column) is logged at critical and written back. Returns every own revocation.
    private static func syncRevocations(_ records: [SigningKeyRecord], ownKeys: [String: KeyDirectory.OwnKey],
                                        directory: KeyDirectory, store: any StepSignStore,
                                        logger: Logger) async throws -> [String: KeyDirectory.Revocation] {
        var revocations = try directory.revocations()
        for record in records where ownKeys[record.kid] != nil {
            if let revokedAt = record.revokedAt, revocations[record.kid] == nil {
                // Revoked through another daemon: its index is proven from the ledger later.
                try directory.recordRevocation(of: record.kid, at: revokedAt, logIndex: nil)
                revocations[record.kid] = .init(at: revokedAt, logIndex: nil)
            } else if let recorded = revocations[record.kid],
                      record.revokedAt == nil || (recorded.logIndex != nil && record.revokedIndex != recorded.logIndex) {
                logger.critical("the store shows a revoked signing key as not revoked (or at another log index); it stays revoked as recorded", metadata: ["kid": "\(record.kid)", "recordedIn": "\(directory.path)"])
                _ = try await store.revokeSigningKey(kid: record.kid, at: recorded.at, logIndex: recorded.logIndex)
            }
        }
        return revocations
    }

    /// The kid of this daemon's active, unrevoked key, if it has one.
    private static func ownActive(_ records: [SigningKeyRecord], ownKeys: [String: KeyDirectory.OwnKey],
                                  revocations: [String: KeyDirectory.Revocation]) -> String? {
        records.last { $0.active && $0.revokedAt == nil && revocations[$0.kid] == nil && ownKeys[$0.kid] != nil }?.kid
    }

    /// The keys as the store lists them, own ones with their private halves, plus own key
    /// files the store does not list; each with its trust. Another instance's key without a
    /// usable public half is left out (and logged): it cannot be published or checked.
    private static func makeState(_ records: [SigningKeyRecord], ownKeys: [String: KeyDirectory.OwnKey],
                                  revocations: [String: KeyDirectory.Revocation], instance: String, root: P256PublicKey?,
                                  logger: Logger) throws -> State {
        var candidates: [EndorsementChain.Candidate] = []
        var recorded: Set<String> = []
        for record in records {
            recorded.insert(record.kid)
            let publicKey: P256PublicKey
            if let own = ownKeys[record.kid] {
                publicKey = own.key.publicKey
            } else if let pem = record.publicKeyPEM, let key = try? P256PublicKey(spkiPEM: pem), key.thumbprint == record.kid {
                publicKey = key
            } else {
                logger.error("the store lists a signing key without a usable public key; it is not published",
                             metadata: ["kid": "\(record.kid)", "instance": "\(record.instance)"])
                continue
            }
            var record = record
            record.revokedAt = record.revokedAt ?? revocations[record.kid]?.at
            candidates.append(.init(record: record, publicKey: publicKey, isOwn: ownKeys[record.kid] != nil,
                                    isRevoked: record.revokedAt != nil))
        }
        for (kid, own) in ownKeys.sorted(by: { $0.key < $1.key }) where !recorded.contains(kid) {
            logger.critical("a key file in keys/ is missing from the store (deleted from the database?); it stays published",
                            metadata: ["kid": "\(kid)"])
            let record = SigningKeyRecord(kid: kid, createdAt: own.modified, active: false, revokedAt: revocations[kid]?.at,
                                          instance: instance)
            candidates.append(.init(record: record, publicKey: own.key.publicKey, isOwn: true, isRevoked: record.revokedAt != nil))
        }
        let trust = EndorsementChain.evaluate(candidates, root: root)
        let keys = candidates.map { candidate in
            let record = candidate.record
            return Key(kid: record.kid, createdAt: record.createdAt, isActive: record.active && record.revokedAt == nil,
                       revokedAt: record.revokedAt, revokedIndex: nil, instance: record.instance, publicKey: candidate.publicKey,
                       trust: trust[record.kid] ?? .untrusted(reason: "not evaluated"),
                       isRecorded: recorded.contains(record.kid), privateKey: ownKeys[record.kid]?.key)
        }
        guard let active = keys.last(where: { $0.isActive && $0.isOwn && $0.isRecorded }), let signer = active.privateKey else {
            throw KeyringError.noActiveKey
        }
        return State(ownKeys: ownKeys, keys: keys, active: active, signer: signer,
                     activeChainsToRoot: root != nil && EndorsementChain.trustSeenByOthers(
                         of: active.kid, candidates, root: root, decided: trust).isTrusted,
                     created: nil)
    }

    /// Writes a new key file, then records it, with its public half and (when this instance
    /// has a key to endorse it with) its endorsement, as the instance's active key.
    ///
    /// Generating, encrypting and writing the key (two `fsync`s) block, so they run on
    /// `NIOThreadPool`, never on the event loop that serves the admin's connection.
    private static func create(in directory: KeyDirectory, instance: String, endorser: P256PrivateKey?,
                               store: any StepSignStore) async throws -> P256PrivateKey {
        let (key, endorsement) = try await NIOThreadPool.singleton.runIfActive { () throws -> (P256PrivateKey, String?) in
            let key = try directory.generate()
            try directory.write(key)
            let endorsement = try endorser.map { endorser in
                try KeyEndorsement(instance: instance, key: key.publicKey, iat: Int64(Date().timeIntervalSince1970))
                    .signed(by: endorser)
            }
            return (key, endorsement)
        }
        try await store.addSigningKey(kid: key.publicKey.thumbprint, createdAt: Date(), instance: instance,
                                      publicKeyPEM: key.publicKey.spkiPEM, endorsement: endorsement)
        return key
    }

    /// Logs, once per key, every key the daemon does not trust (critical: someone wrote a key
    /// row, or a cluster is not endorsed yet), and this instance's active key when a cluster
    /// root is configured but the key does not chain to it (other daemons will not trust its
    /// signatures).
    private func reportTrust() {
        let (keys, active, activeChains) = state.withLockedValue { ($0.keys, $0.active, $0.activeChainsToRoot) }
        let unreported = reported.withLockedValue { seen in
            let fresh = keys.filter { !$0.trust.isTrusted && !seen.contains($0.kid) }
            seen.formUnion(fresh.map(\.kid))
            return fresh
        }
        for key in unreported {
            logger.critical("a signing key in the store is not trusted: not published, its signatures do not verify",
                            metadata: ["kid": "\(key.kid)", "instance": "\(key.instance)",
                                       "reason": "\(key.trust.problem ?? "")"])
        }
        if root.withLockedValue({ $0 }) != nil, !activeChains, reported.withLockedValue({ $0.insert("active:" + active.kid).inserted }) {
            logger.warning("this instance's signing key does not chain to the cluster root: other daemons will not trust its signatures until the operator runs stepsign admin cluster endorse for it",
                           metadata: ["kid": "\(active.kid)", "instance": "\(instance)"])
        }
    }

    /// The key new signatures are made with.
    public var active: Key { state.withLockedValue { $0.active } }

    /// The active key's kid and private half, for the signer.
    var signer: (kid: String, key: P256PrivateKey) { state.withLockedValue { ($0.active.kid, $0.signer) } }

    /// Every key: own ones (also those the store lost) and every key the store lists, oldest
    /// first; retired, revoked and untrusted keys included.
    public var keys: [Key] { state.withLockedValue { $0.keys } }

    /// Public keys for verifiers: the trusted ones (own, or endorsed up to the cluster root),
    /// active and retired, and those revoked at a proven log index, with it (SPEC §5.4:
    /// `stepsign_revoked_at`); untrusted keys and keys revoked without a proven index left out.
    public var trustedKeys: TrustedKeys {
        let keys = self.keys.filter { $0.trust.isTrusted && ($0.revokedAt == nil || $0.revokedIndex != nil) }
        return TrustedKeys(keys: keys.map(\.publicKey),
                           revokedAt: Dictionary(keys.compactMap { key in key.revokedIndex.map { (key.kid, $0) } },
                                                 uniquingKeysWith: { first, _ in first }))
    }

    /// The trusted keys that are not revoked: what a verifier without log indexes (a PEM
    /// bundle) may be given.
    public var unrevokedKeys: TrustedKeys {
        TrustedKeys(keys: keys.filter { $0.trust.isTrusted && $0.revokedAt == nil }.map(\.publicKey))
    }

    /// Puts another cluster root in force (a reload); the keys' trust is decided again at the
    /// next ``refresh()``.
    public func useClusterRoot(_ key: P256PublicKey?) {
        root.withLockedValue { $0 = key }
    }

    /// Reads the keys from the store again: other daemons' new keys, endorsements and
    /// revocations. If this daemon's active key has been revoked (by another daemon), makes a
    /// new one.
    public func refresh() async throws {
        try await mutations.run { try await self.reload(creating: true) }
    }

    private func reload(creating: Bool) async throws {
        let new = try await Self.loadState(directory: directory, instance: instance, store: store,
                                           root: root.withLockedValue { $0 }, creating: creating,
                                           known: state.withLockedValue { $0.ownKeys },
                                           proven: state.withLockedValue { $0.provenIndexes },
                                           revocationLog: state.withLockedValue { $0.revocationLog }, logger: logger)
        state.withLockedValue { $0 = new }
        if let kid = new.created {
            created.withLockedValue { $0.append(kid) }
            logger.notice("this instance's signing key was revoked elsewhere; made a new one", metadata: ["kid": "\(kid)"])
        }
        reportTrust()
    }

    /// Makes a new key this daemon's active signer, endorsed by the current one (SPEC §5.4);
    /// the old ones stay published. Returns the new kid.
    public func rotate() async throws -> String {
        try await mutations.run { try await self.rotateNow() }
    }

    private func rotateNow() async throws -> String {
        let current = state.withLockedValue { $0.signer }
        let key = try await Self.create(in: directory, instance: instance, endorser: current, store: store)
        try await reload(creating: false)
        // The log key stays (SPEC §2): it is the log's identity towards witnesses.
        logger.notice("rotated the signing key; the log key stays", metadata: ["kid": "\(key.publicKey.thumbprint)"])
        return key.publicKey.thumbprint
    }

    /// Makes a new log key (SPEC §2, `admin.rotateLogKey`); the old one signs every note beside
    /// it until the log has `overlapUntil` entries, and stays published. Returns the new key.
    public func rotateLogKey(overlapUntil: Int64) async throws -> Ed25519PublicKey {
        try await mutations.run {
            let rotated = try LogKey.rotate(self.logKeys.withLockedValue { $0 }, directory: self.directory.path,
                                            passphrase: self.directory.passphrase, overlapUntil: overlapUntil,
                                            token: self.directory.token)
            self.logKeys.withLockedValue { $0 = rotated }
            self.logger.notice("rotated the log key; the old one signs beside it until the overlap ends",
                               metadata: ["overlapUntilSize": "\(overlapUntil)"])
            return rotated.active.publicKey
        }
    }

    /// What ``revoke(kid:now:recordEvent:)`` did.
    public struct Revocation: Sendable {
        /// This daemon's active kid afterwards.
        public var activeKid: String
        /// The log index of the revocation event.
        public var logIndex: Int64
    }

    /// Withdraws a (compromised) key at once, this daemon's or another instance's (SPEC
    /// §5.4): rotates first if it is this daemon's active key, records an own key's
    /// revocation in `keys/` (which nothing undoes), has `recordEvent` append the signed
    /// revocation event (given the kid rotated from and to, if it rotated; it returns the
    /// event's log index R), then records R and marks the key revoked in the store. The key's
    /// signatures below R stay valid; later ones are bad everywhere. Another instance whose
    /// active key this was gets its next ledger row refused and makes a new key
    /// (``refresh()``). Throws ``StepSignError`` 4 for an unknown or already revoked kid.
    public func revoke(kid: String, now: Date = Date(),
                       recordEvent: @escaping @Sendable (_ rotated: (from: String, to: String)?) async throws -> Int64) async throws -> Revocation {
        try await mutations.run {
            try await self.reload(creating: true)
            guard let key = self.keys.first(where: { $0.kid == kid }) else {
                throw StepSignError.invalid("no signing key \"\(kid)\"")
            }
            guard key.revokedAt == nil else { throw StepSignError.invalid("key \"\(kid)\" is already revoked") }
            var rotated: (from: String, to: String)?
            if key.isActive, key.isOwn { rotated = (kid, try await self.rotateNow()) }
            if key.isOwn { try self.directory.recordRevocation(of: kid, at: now, logIndex: nil) }
            let logIndex = try await recordEvent(rotated)
            if key.isOwn { try self.directory.recordRevocation(of: kid, at: now, logIndex: logIndex) }
            guard try await self.store.revokeSigningKey(kid: kid, at: now, logIndex: logIndex) || key.isOwn else {
                throw StepSignError.invalid("key \"\(kid)\" is already revoked")
            }
            try await self.reload(creating: false)
            self.logger.notice("revoked a signing key", metadata: [
                "kid": "\(kid)", "instance": "\(key.instance)", "activeKid": "\(self.active.kid)", "logIndex": "\(logIndex)",
            ])
            return Revocation(activeKid: self.active.kid, logIndex: logIndex)
        }
    }

    /// Stores the cluster root's endorsement of a key (`admin.endorseKey`, SPEC §5.4), after
    /// checking it against the root in force and against the key the store lists under its
    /// kid and instance. Returns the endorsed kid. Throws ``StepSignError`` 170 without a
    /// cluster root, 4 for an endorsement that does not verify or names no such key.
    public func addEndorsement(_ compact: String) async throws -> String {
        guard let root = root.withLockedValue({ $0 }) else {
            throw StepSignError(.notSupported, "no cluster root key is configured ([cluster] root_key)")
        }
        let endorsement: KeyEndorsement
        do {
            endorsement = try KeyEndorsement.verify(compact, endorsers: TrustedKeys(keys: [root])).endorsement
        } catch {
            throw StepSignError.invalid("the endorsement is not signed by the cluster root key: \(error.description)")
        }
        return try await mutations.run {
            try await self.reload(creating: false)
            guard let key = self.keys.first(where: { $0.kid == endorsement.kid }), key.isRecorded else {
                throw StepSignError.invalid("no signing key \"\(endorsement.kid)\"")
            }
            guard key.instance == endorsement.instance else {
                throw StepSignError.invalid("key \"\(endorsement.kid)\" is held by instance \"\(key.instance)\", "
                                            + "not \"\(endorsement.instance)\"")
            }
            guard try await self.store.setSigningKeyEndorsement(kid: endorsement.kid, endorsement: compact) else {
                throw StepSignError.invalid("no signing key \"\(endorsement.kid)\"")
            }
            try await self.reload(creating: false)
            self.logger.notice("endorsed a signing key with the cluster root", metadata: [
                "kid": "\(endorsement.kid)", "instance": "\(endorsement.instance)",
            ])
            return endorsement.kid
        }
    }
}

/// Why the keyring could not be loaded.
public enum KeyringError: Error, CustomStringConvertible {
    case kidMismatch(path: String, expected: String, found: String)
    /// The store lists a key of this daemon's instance whose file is not in its state
    /// directory: a lost file, or another daemon on the same database with the same `instance`.
    /// Also a key file that cannot be read: `errno` is then the failed call's (EIO at start is
    /// a fault that may pass, EACCES a setting to fix).
    case missingKeyFile(path: String, instance: String, reason: String, errno: Int32? = nil)
    case noActiveKey
    /// The key file could not be read as a key: encrypted without a passphrase, a wrong
    /// passphrase, or damage. Names the file, never the passphrase.
    case unreadableKey(path: String, reason: P256KeyError)
    /// The PKCS#11 token refused or lost a key (SPEC §5.7): `path` is its record in `keys/`
    /// (or `keys/` when making one).
    case token(path: String, PKCS11Error)

    public var description: String {
        switch self {
        case let .kidMismatch(path, expected, found):
            "key file \(path) holds key \(found), but the store lists it as \(expected)"
        case let .missingKeyFile(path, instance, reason, _) where instance.isEmpty:
            // A file of keys/ that cannot be read, or read as a record (``unreadableFile(path:_:)``).
            "key file \(path) cannot be read (\(reason))"
        case let .missingKeyFile(path, instance, reason, _):
            "the store lists key file \(path) as held by instance \"\(instance)\", but it cannot be read (\(reason)); "
                + "every daemon sharing a database needs its own instance name"
        case .noActiveKey: "the store lists signing keys but none of this daemon's is active"
        case let .unreadableKey(path, reason): "key file \(path): \(reason)"
        case let .token(path, error): "\(path): \(error)"
        }
    }
}

extension KeyringError: ErrnoCarrying {
    /// A key file that `error` (reading it) says cannot be read, with the failed call's errno.
    static func unreadableFile(path: String, _ error: any Error) -> KeyringError {
        .missingKeyFile(path: path, instance: "", reason: "\(error)", errno: (error as? any ErrnoCarrying)?.carriedErrno)
    }

    package var carriedErrno: Int32? {
        if case let .missingKeyFile(_, _, _, code) = self { code } else { nil }
    }

    package var carriedPath: String? {
        switch self {
        case let .missingKeyFile(path, _, _, _), let .kidMismatch(path, _, _), let .unreadableKey(path, _),
             let .token(path, _): path
        case .noActiveKey: nil
        }
    }
}
