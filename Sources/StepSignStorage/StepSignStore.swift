import Foundation
import StepSignFormat

/// Everything stepsignd keeps between requests: users and their counters, password history,
/// device keys, activation codes, signing key metadata and the signature ledger (SPEC §5).
///
/// The engine talks to storage only through this protocol so that a shared backend (for
/// example PostgreSQL serving several daemons) can replace the embedded ``SQLiteStore``.
///
/// Rules every implementation keeps:
/// - Each method is atomic: it either fully happens or not at all.
/// - Counters (failed attempts, blocks) live in the store, never per connection.
/// - ``appendLedger(_:)`` returns only after the batch is durably committed.
/// - Methods that change a user return `false` (or `nil`) when the user does not exist,
///   unless documented to throw ``StorageError/noSuchUser(_:)``.
public protocol StepSignStore: Sendable {
    // MARK: Users

    /// The user called `name` (names are case-sensitive), or nil.
    func user(named name: String) async throws -> UserRecord?

    /// Adds a user with a new ``CredentialToken`` (never one a removed user of the same name
    /// had). Throws ``StorageError/userExists(_:)`` if the name is taken.
    func addUser(_ new: NewUser) async throws

    /// Removes a user with their password history, device keys and activation code.
    /// Ledger rows naming the user stay. Returns false if there was no such user.
    func removeUser(named name: String) async throws -> Bool

    /// All users, sorted by name (byte order).
    func listUsers() async throws -> [UserRecord]

    /// Clears `blocked`, `blockedUntil` and `failedAttempts`. Returns false if no such user.
    func unlockUser(named name: String) async throws -> Bool

    /// Forces the user's password to count as expired and makes a new ``CredentialToken``
    /// (the user's logins end). Returns false if no such user.
    func expirePassword(named name: String) async throws -> Bool

    // MARK: Attempts

    /// The attempt counter of `name` at `now`: a user's, or that of a name that is not a user
    /// (kept alike, so that replies and timing do not tell the two apart). A name never seen
    /// has a fresh counter.
    func attemptCounter(name: String, now: Date) async throws -> AttemptCounter

    /// Takes one attempt from the counter of `name` *before* its answer is checked, in one
    /// atomic step (SPEC §5.1: reserve, then check).
    ///
    /// A temporary block that ended before `now` is lifted first. A blocked name gets
    /// ``AttemptReservation/denied(blockedUntil:)`` and nothing changes. Otherwise the attempt
    /// counts as a failure at once; the one that reaches `maxAttempts` blocks the name, until
    /// `now + blockSeconds`, or until an admin unlocks when `blockSeconds` is 0, and gives a
    /// user a new ``CredentialToken`` in the same step (the user's logins end). So with
    /// `maxAttempts` N, at most N answers are ever checked between two successes, however
    /// many arrive at once, and an answer in flight when the daemon dies stays counted.
    /// Names that are not users are counted in the store too (under a keyed hash of the
    /// name, pruned when idle past a day or `blockSeconds`).
    func reserveAttempt(name: String, maxAttempts: Int, blockSeconds: Int, now: Date) async throws -> AttemptReservation

    /// A right answer gives its reserved attempt back: the counter starts over and the block
    /// the reservations led to is lifted.
    func giveBackAttempt(name: String, now: Date) async throws

    // MARK: Passwords

    /// Replaces the user's password hash.
    ///
    /// Sets the change time to `at`, clears `passwordExpired` and `mustChangePassword`,
    /// pushes the previous hash into the history, keeps at most `historyLimit` earlier
    /// hashes, and makes a new ``CredentialToken`` (the user's other logins end), which it
    /// returns so that the login that changed the password can go on with it.
    /// Throws ``StorageError/noSuchUser(_:)`` if the user does not exist.
    @discardableResult
    func setPassword(user: String, hash: String, at: Date, historyLimit: Int) async throws -> CredentialToken

    /// Replaces the user's password hash with `replacement` (the same password hashed with
    /// other parameters) if it is still `expected`; changes nothing else (not the change time,
    /// not the history). Returns whether it did.
    func rehashPassword(user: String, expected: String, replacement: String) async throws -> Bool

    /// Up to `limit` password hashes of the user, newest first: the current hash, then the
    /// earlier ones. Empty if there is no such user.
    func passwordHistory(user: String, limit: Int) async throws -> [String]

    // MARK: Device keys

    /// Registers an LDA device key. Throws ``StorageError/noSuchUser(_:)`` or
    /// ``StorageError/deviceKeyExists(_:)``.
    func addDeviceKey(_ key: DeviceKeyRecord) async throws

    /// The user's device keys, oldest first; revoked ones only if `includeRevoked`.
    func deviceKeys(user: String, includeRevoked: Bool) async throws -> [DeviceKeyRecord]

    /// Marks a key of the user revoked at `at`. Returns false if the user has no such
    /// unrevoked key.
    func revokeDeviceKey(user: String, kid: String, at: Date) async throws -> Bool

    // MARK: Activation codes

    /// Stores the user's open activation code, replacing any earlier one.
    /// Throws ``StorageError/noSuchUser(_:)``.
    func putActivationCode(_ code: ActivationCodeRecord) async throws

    /// The user's open activation code, or nil.
    func activationCode(user: String) async throws -> ActivationCodeRecord?

    /// Issues a code for `code.user` against the name's hourly budget, atomically: at most
    /// `maxCodesPerHour` codes per name and hour (SPEC §5.1). Stores the code, replacing any
    /// earlier one, when the name is a user; for other names only the budget is counted.
    func issueActivationCode(_ code: ActivationCodeRecord, maxCodesPerHour: Int, now: Date) async throws -> ActivationIssue

    /// Takes one attempt from the name's activation-code budget before a code is checked:
    /// at most `maxAttempts` wrong codes per name in the budget's hour, whatever codes were
    /// issued meanwhile. ``AttemptReservation/denied(blockedUntil:)`` when none is left.
    func reserveActivationAttempt(name: String, maxAttempts: Int, now: Date) async throws -> AttemptReservation

    /// Uses up the user's open code if its hash is still `codeHash` and it has not expired
    /// at `now` (check-and-consume: of concurrent right answers exactly one gets true), and
    /// gives the name's wrong-code budget back.
    func consumeActivationCode(user: String, codeHash: String, now: Date) async throws -> Bool

    /// Deletes the user's open activation code. Returns false if there was none.
    @discardableResult
    func deleteActivationCode(user: String) async throws -> Bool

    // MARK: Single use

    /// Marks `value` (a nonce, an assertion ID) used until `expiresAt`; true only for the
    /// first use, atomically across connections (SPEC §5.1). Values that expired before
    /// `now` are forgotten.
    func useOnce(_ value: String, expiresAt: Date, now: Date) async throws -> Bool

    // MARK: Signing keys

    /// All signing keys of every daemon instance, oldest first. At most one per instance is
    /// active.
    func signingKeys() async throws -> [SigningKeyRecord]

    /// Records a new signing key, held by the daemon `instance`, with its public half, and makes
    /// it that instance's only active key, atomically (keys of other instances are untouched;
    /// keys recorded before instances were, with instance "", count as the rotating
    /// instance's). `endorsement`, when given, is stored with it in the same step (SPEC §5.4:
    /// a daemon endorses its successor as it rotates). Throws
    /// ``StorageError/signingKeyExists(_:)`` if `kid` is known.
    func addSigningKey(kid: String, createdAt: Date, instance: String, publicKeyPEM: String?,
                       endorsement: String?) async throws

    /// Stores `endorsement` for the key `kid`, replacing any earlier one (the operator's root
    /// endorsement replaces a predecessor's). Returns false if there is no such key. The store
    /// does not check it: every daemon checks the chain itself when it reads the keys.
    func setSigningKeyEndorsement(kid: String, endorsement: String) async throws -> Bool

    /// Fills in the public half of a key recorded without one (before the column existed).
    /// A key that has one already keeps it.
    func recordSigningKeyPublicKey(kid: String, publicKeyPEM: String) async throws

    /// Marks the key revoked at `at` (and no longer active), by the revocation event at log
    /// index `logIndex` when given. Returns false if there is no such key or it was revoked
    /// already; a key revoked already without an index gets `logIndex` filled in. The caller
    /// makes another key active first.
    func revokeSigningKey(kid: String, at: Date, logIndex: Int64?) async throws -> Bool

    // MARK: Ledger

    /// Appends a batch of signatures in one durable transaction (group commit).
    ///
    /// Assigns consecutive sequence numbers after the last entry and chains the hashes
    /// with ``LedgerChain/entryHash(previous:jws:)``. Returns the stored entries, in batch
    /// order, only after the commit is durable. Nothing is stored if it throws.
    ///
    /// Blocks the calling thread until the commit is durable: the engine calls it from its
    /// ledger writer's own thread, never from an event loop or the cooperative pool, so the
    /// hot path pays no thread hop per batch.
    ///
    /// When `checkpointEvery` is above 0, every entry whose seq is a multiple of it gets a
    /// checkpoint from `signCheckpoint(seq, entryHash)`, stored in the same transaction (SPEC
    /// §5.3): no crash and no reader ever sees such an entry without its checkpoint.
    func appendLedger(_ batch: [LedgerAppend], checkpointEvery: Int,
                      signCheckpoint: (Int64, [UInt8]) throws -> LedgerCheckpointRecord) throws -> [LedgerEntry]

    /// Stores a checkpoint made outside a batch (timed, on shutdown, `getCheckpoint`). Blocks
    /// until durable, like ``appendLedger(_:checkpointEvery:signCheckpoint:)``.
    func appendCheckpoint(_ checkpoint: LedgerCheckpointRecord) throws

    /// How the engine's ledger writer should call this store's appends: on a thread of its own
    /// through the blocking ``appendLedger(_:checkpointEvery:signCheckpoint:)`` (SQLite: a
    /// local fsync, no thread hop), or from a task through the `async`
    /// ``commitLedgerBatch(_:checkpointEvery:signCheckpoint:)`` (a network round trip that
    /// must not hold a thread).
    var ledgerWriting: LedgerWriting { get }

    /// ``appendLedger(_:checkpointEvery:signCheckpoint:)`` for callers in async code: the same
    /// batch, numbering, chaining, checkpoints and durability, without blocking a thread on a
    /// server. The default calls the blocking append (right for a store whose
    /// ``ledgerWriting`` is ``LedgerWriting/blockingThread``, whose commit is a local disk write).
    func commitLedgerBatch(_ batch: [LedgerAppend], checkpointEvery: Int,
                           signCheckpoint: @Sendable (Int64, [UInt8]) throws -> LedgerCheckpointRecord) async throws -> [LedgerEntry]

    /// ``commitLedgerBatch(_:checkpointEvery:signCheckpoint:)`` whose rows are taken by `take`
    /// when the store is ready for them: a store may take them only once it holds its ledger
    /// lock, so that rows arriving while it waits join the batch. `take` is called at most
    /// once; the caller knows from its own `take` which rows an error concerns (none, when it
    /// was not called). The default, which both stores use, takes at once and commits
    /// (PostgreSQL holds its lock only inside the one call that appends and commits).
    func commitLedgerBatch(takingRowsWith take: @escaping @Sendable () -> [LedgerAppend], checkpointEvery: Int,
                           signCheckpoint: @Sendable (Int64, [UInt8]) throws -> LedgerCheckpointRecord) async throws -> [LedgerEntry]

    /// ``appendCheckpoint(_:)`` for callers in async code. The default calls the blocking one.
    func commitCheckpoint(_ checkpoint: LedgerCheckpointRecord) async throws

    /// The stored checkpoints with seq greater than `afterSeq` and at most `throughSeq` (nil:
    /// no upper bound), by seq.
    func ledgerCheckpoints(afterSeq: Int64, throughSeq: Int64?) async throws -> [LedgerCheckpointRecord]

    /// The last entry's seq and hash; (0, genesis) when the ledger is empty.
    func ledgerHead() async throws -> LedgerHead

    /// The entry with this signature ID, or nil.
    func ledgerEntry(signatureID: String) async throws -> LedgerEntry?

    /// The number of entries, which is the last sequence number (0 when empty).
    func ledgerCount() async throws -> Int64

    /// The number of entries that are signatures: all of them less the events of SPEC §5.4
    /// (rows whose `authLevel` is ``LedgerAppend/eventAuthLevel``, which a partial index
    /// counts), read from one snapshot.
    func ledgerSignatureCount() async throws -> Int64

    /// Up to `limit` entries with sequence numbers greater than `afterSeq`, in order.
    func ledgerEntries(afterSeq: Int64, limit: Int) async throws -> [LedgerEntry]

    /// Up to `limit` events (SPEC §5.4) naming `user` ("" for events that name no user: the
    /// signing keys' and the configuration's) with sequence numbers greater than `afterSeq`,
    /// in order: an index range, however long the ledger.
    func ledgerEvents(user: String, afterSeq: Int64, limit: Int) async throws -> [LedgerEntry]

    /// Runs ``LedgerVerifier`` over the stored checkpoints and the whole ledger in sequence
    /// order, from one read snapshot, one row at a time.
    func auditLedger(options: LedgerVerifier.Options) async throws -> LedgerAudit

    // MARK: Life cycle

    /// Closes the store. Calls after this fail.
    func close() async throws
}

extension StepSignStore {
    /// Records a new signing key for an unnamed instance, without its public half.
    public func addSigningKey(kid: String, createdAt: Date) async throws {
        try await addSigningKey(kid: kid, createdAt: createdAt, instance: "", publicKeyPEM: nil, endorsement: nil)
    }

    /// Records a new signing key held by `instance`, without its public half.
    public func addSigningKey(kid: String, createdAt: Date, instance: String) async throws {
        try await addSigningKey(kid: kid, createdAt: createdAt, instance: instance, publicKeyPEM: nil, endorsement: nil)
    }

    /// Records a new signing key held by `instance`, with its public half and no endorsement.
    public func addSigningKey(kid: String, createdAt: Date, instance: String, publicKeyPEM: String?) async throws {
        try await addSigningKey(kid: kid, createdAt: createdAt, instance: instance, publicKeyPEM: publicKeyPEM, endorsement: nil)
    }

    /// Marks the key revoked at `at`, with no log index.
    public func revokeSigningKey(kid: String, at: Date) async throws -> Bool {
        try await revokeSigningKey(kid: kid, at: at, logIndex: nil)
    }

    /// Appends a batch without checkpoints.
    public func appendLedger(_ batch: [LedgerAppend]) throws -> [LedgerEntry] {
        try appendLedger(batch, checkpointEvery: 0) { _, _ in throw StorageError.malformedRow(table: "ledger_checkpoints", detail: "no signer") }
    }

    public var ledgerWriting: LedgerWriting { .blockingThread }

    public func commitLedgerBatch(_ batch: [LedgerAppend], checkpointEvery: Int,
                                  signCheckpoint: @Sendable (Int64, [UInt8]) throws -> LedgerCheckpointRecord) async throws -> [LedgerEntry] {
        try appendLedger(batch, checkpointEvery: checkpointEvery, signCheckpoint: signCheckpoint)
    }

    public func commitLedgerBatch(takingRowsWith take: @escaping @Sendable () -> [LedgerAppend], checkpointEvery: Int,
                                  signCheckpoint: @Sendable (Int64, [UInt8]) throws -> LedgerCheckpointRecord) async throws -> [LedgerEntry] {
        try await commitLedgerBatch(take(), checkpointEvery: checkpointEvery, signCheckpoint: signCheckpoint)
    }

    public func commitCheckpoint(_ checkpoint: LedgerCheckpointRecord) async throws {
        try appendCheckpoint(checkpoint)
    }

    /// Appends a batch without checkpoints, from async code.
    public func commitLedgerBatch(_ batch: [LedgerAppend]) async throws -> [LedgerEntry] {
        try await commitLedgerBatch(batch, checkpointEvery: 0) { _, _ in
            throw StorageError.malformedRow(table: "ledger_checkpoints", detail: "no signer")
        }
    }

    /// Checks the hash chain only.
    public func auditLedger() async throws -> LedgerAudit {
        try await auditLedger(options: LedgerVerifier.Options(trustedKeys: nil))
    }
}

/// The ledger's last entry: its sequence number and hash.
public struct LedgerHead: Sendable, Equatable {
    public var seq: Int64
    public var entryHash: [UInt8]

    public init(seq: Int64, entryHash: [UInt8]) {
        self.seq = seq
        self.entryHash = entryHash
    }
}
