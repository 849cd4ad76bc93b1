#if canImport(Glibc)
import StepSignSystem
import Glibc
#endif
import Logging
import NIOConcurrencyHelpers
import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import StepSignStorage
import struct Foundation.Date
import StepSignMetrics

/// The ledger as a transparency log (SPEC §5.5): signs its checkpoints as C2SP signed notes,
/// and never signs two histories.
///
/// A checkpoint names the log's `origin`, a tree size and the root of the store's Merkle tree
/// at that size, and carries two signatures under the origin's name: the log key's (Ed25519,
/// type 0x01) and the daemon's active signing key's (ECDSA P-256, type 0x02). Before it signs
/// one, it checks a consistency proof from the last checkpoint it signed, which it keeps in
/// `keys/log-checkpoint` (outside the database, written with `fsync` before the new one
/// leaves): a store whose log is not an extension of what this daemon signed gets no
/// signature, and the daemon refuses every signing from then on (``LogAlarm``). Checkpoints
/// are made one at a time, so the kept one only grows.
final class TransparencyLog: Sendable {
    /// A signed checkpoint: its note and the body it signs.
    struct Signed: Sendable, Equatable {
        var note: SignedNote
        var checkpoint: LogCheckpoint
    }

    static let stateFileName = "log-checkpoint"

    /// The log's epochs and their origins, as last read from the store.
    private let epochs: LogEpochs
    private let instance: String
    private let store: any LedgerStore & LogEpochStore
    private let keyring: Keyring
    private let alarm: LogAlarm
    private let logger: Logger
    /// The last checkpoint this daemon signed, and one pending with a batch not yet committed.
    private let kept: KeptCheckpoint
    /// The hash of the entry at a kept checkpoint's size, as this daemon chained it.
    private let head: KeptChainHead
    /// The tree's right edge and the chain's head computed from entries (SPEC §5.5: roots from
    /// entries): every root this daemon signs is checked against it.
    let frontier: LogFrontier
    private let making = SerialExecutionQueue()
    /// Where a checkpoint signed with a key in the token is signed (off the cooperative pool).
    private let threads: TokenSigningThreads
    /// Publishes each new checkpoint as tiles (`ledger.tiles_dir`), if set.
    let publisher: TilePublisher?

    init(origin: String, instance: String, store: any LedgerStore & LogEpochStore, keyring: Keyring, alarm: LogAlarm, logger: Logger,
         publisher: TilePublisher? = nil, threads: TokenSigningThreads = TokenSigningThreads(threads: nil)) {
        self.publisher = publisher
        self.threads = threads
        self.epochs = LogEpochs(first: origin, store: store, keyring: keyring, logger: logger)
        self.instance = instance
        self.store = store
        self.keyring = keyring
        self.alarm = alarm
        self.logger = logger
        self.kept = KeptCheckpoint(path: keyring.directoryPath + "/" + Self.stateFileName)
        self.head = KeptChainHead(path: keyring.directoryPath + "/" + Self.stateFileName + ".head", logger: logger)
        self.frontier = LogFrontier(store: store)
    }

    /// The origin of new checkpoints: the current epoch's.
    var origin: String { epochs.known.current }

    /// The origins of the log's epochs as this daemon knows them.
    var knownOrigins: LogOrigins { epochs.known }

    /// `ledger.origin`, or its default `stepsign.<host name>/<instance>`.
    static func origin(configured: String, instance: String) -> String {
        guard configured.isEmpty else { return configured }
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "localhost"
        let word = { (text: String) in String(text.unicodeScalars.filter { $0.value > 0x20 && $0 != "+" && $0.value != 0x7f }) }
        return "stepsign." + word(host) + "/" + word(instance)
    }

    /// The log's origin for a daemon configured with `configured` (`ledger.origin`, "" for the
    /// default): SPEC §5.5's one origin per log. The store keeps the first daemon's; a daemon
    /// with the default takes the stored one (so a renamed host, or a second host on one
    /// PostgreSQL, goes on with the log's origin), and one configured with another is refused.
    static func claimOrigin(configured: String, instance: String, store: any LogEpochStore) async throws -> String {
        let mine = origin(configured: configured, instance: instance)
        let stored = try await store.claimLogOrigin(mine)
        guard stored == mine || configured.isEmpty else {
            throw LogOriginMismatch(stored: stored, configured: configured)
        }
        return stored
    }

    /// The note verifier keys of the log's checkpoints, under the name of each origin the log
    /// has had (SPEC §5.5: one per epoch, the current one first): this daemon's log keys (type
    /// 0x01: the active one and those rotations retired) and the trusted P-256 keys that are not
    /// revoked (type 0x02: this daemon's, and on a shared PostgreSQL the endorsed keys of the
    /// daemons that sign checkpoints of the same log). A revoked key is left out: whoever took
    /// it could sign a checkpoint of any size with it.
    var verifierKeys: [NoteVerifierKey] {
        let logKeys = keyring.allLogKeys, p256Keys = keyring.unrevokedKeys.all
        var keys: [NoteVerifierKey] = []
        for name in knownOrigins.all.reversed() {
            keys += logKeys.compactMap { try? NoteVerifierKey(name: name, ed25519: $0) }
            keys += p256Keys.compactMap { try? NoteVerifierKey(name: name, p256: $0) }
        }
        return keys
    }

    /// A checkpoint of the whole log as stored now (SPEC §5.3's moments: timed, on shutdown,
    /// `getCheckpoint`; those after `checkpoint_entries` entries are made with the batch that
    /// reaches them, ``signForCommit(roots:prepared:proof:)``).
    func checkpointHead(reason: String) async throws -> Signed {
        try await sign(size: nil, reason: reason)
    }

    /// A checkpoint that covers leaf `index`: the last one this daemon signed if it does, else
    /// a new one of the whole log (SPEC §5.5: a new one only when none covers the entry yet).
    func checkpoint(covering index: Int64) async throws -> Signed {
        if let kept = try lastSigned(), kept.checkpoint.size > index { return kept }
        return try await checkpointHead(reason: "proof")
    }

    /// Checks, signing nothing, that the log as stored extends the last checkpoint this daemon
    /// signed: its origin is the log's at its size, the log has at least its entries, and the
    /// tree of its size has its root. Refuses (and raises the alarm) otherwise. A checkpoint a
    /// crash left pending (signed for a batch whose commit it interrupted) is kept first if that
    /// transaction committed (the store has its root), else forgotten.
    func checkKept() async throws {
        try await making.run { [self] in
            try await refreshOrigins()
            do {
                if let settled = try await kept.settleLeftover(committed: { [store] pending in
                    let size = pending.checkpoint.size
                    guard try await store.ledgerCount() >= size else { return false }
                    return try await store.ledgerRoot(size: size) == pending.checkpoint.rootHash
                }) {
                    logger.notice("a log checkpoint signed in a transaction a crash interrupted is kept: the transaction committed",
                                  metadata: ["size": "\(settled.checkpoint.size)"])
                }
            } catch let error as KeptCheckpoint.Unreadable where !error.mayPass {
                throw refuse(error.description)
            }
            if let kept = try lastSigned() {
                try requireOrigin(of: kept)
                let size = kept.checkpoint.size
                let count = try await store.ledgerCount()
                guard count >= size else {
                    throw refuse(Self.shorter(count: count, keptSize: size))
                }
                guard try await store.ledgerRoot(size: size) == kept.checkpoint.rootHash else {
                    throw refuse("the log does not extend the checkpoint of \(size) this daemon signed: the tree of \(size) entries has another root")
                }
            }
            // The tree's right edge, from the kept checkpoint up, from entries (SPEC §5.5).
            _ = try await fromEntries { [self] in
                try await frontier.rebuild(from: try lastSigned()?.checkpoint, head: head.current())
            }
        }
    }

    // MARK: Roots from entries (SPEC §5.5)

    /// Runs `body`; a ``LogFrontier/Disagreement`` it throws refuses the log (15, `logProblem`,
    /// critical).
    private func fromEntries<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let disagreement as LogFrontier.Disagreement {
            throw refuse(disagreement.description)
        }
    }

    /// Checks that `root`, read from the stored tree of `size` entries, is the root of the
    /// entries: the tail computed from entries is brought up to the log's end (other daemons'
    /// entries read and hashed), and `root` must be its root, or lead to it by the stored
    /// consistency proof. Refuses the log otherwise.
    private func requireRootFromEntries(size: Int64, root: [UInt8]) async throws {
        try await fromEntries { [self] in
            for _ in 0..<Self.signingAttempts {
                let keptCheckpoint = try lastSigned()?.checkpoint
                try await frontier.catchUp(kept: keptCheckpoint, head: head.current())
                guard let tail = frontier.current, tail.size >= size else { continue }
                if size == tail.size {
                    guard root == tail.tree.root else {
                        throw LogFrontier.Disagreement(description: "a stored node disagrees with the entries: the stored tree of \(size) entries has another root than its entries")
                    }
                    return
                }
                guard size > 0 else { return }
                let proof = try await store.ledgerConsistencyProof(from: size, to: tail.size)
                guard MerkleProof.verifyConsistency(oldSize: size, newSize: tail.size, oldRoot: root, newRoot: tail.tree.root,
                                                    proof: proof) else {
                    throw LogFrontier.Disagreement(description: "a stored node disagrees with the entries: the stored tree of \(size) entries does not lead to the root of the log's \(tail.size) entries")
                }
                return
            }
            throw StepSignError(.busy, "the log grew while a checkpoint was being proven: ask again")
        }
    }

    /// The tail a batch is prepared on (built from entries first if it was not yet).
    func prepareAppend() async throws -> LogFrontier.Tail {
        try await fromEntries { [self] in
            try await frontier.ready(kept: try lastSigned()?.checkpoint, head: head.current())
        }
    }

    /// After a batch prepared on `prepared` was committed as `entries`: the tail moves past
    /// them (a stored entry that does not chain onto it refuses the log); `made`, the
    /// checkpoint the batch signed, gets its entry's hash kept beside it.
    func appendCommitted(prepared: LogFrontier.Tail, entries: [LedgerEntry], batch: LedgerCommit, made: Signed?) async throws {
        try await fromEntries { [self] in
            try await frontier.advance(prepared: prepared, past: entries, batch: batch, kept: try lastSigned()?.checkpoint,
                                       head: head.current())
        }
        if let made, let entry = entries.first(where: { $0.seq == made.checkpoint.size }) {
            keepHead(size: entry.seq, hash: entry.entryHash)
        }
    }

    /// The log's tail moved under a batch (SPEC §5.5): the entries after the tail computed from
    /// entries are read and hashed (a log that no longer extends it is refused). One read, as
    /// the writer's catch-up always was: the nodes they complete are compared by the proofs
    /// of the next checkpoints, not here (two daemons on one database take this path each batch).
    func catchUpForAppend() async throws {
        _ = try await fromEntries { [self] in
            try await frontier.catchUp(kept: try lastSigned()?.checkpoint, head: head.current(), checkNodes: false)
        }
    }

    /// Keeps the hash of entry `size` beside a checkpoint of that size; a failure is logged
    /// (the kept checkpoint still guards the log).
    private func keepHead(size: Int64, hash: [UInt8]) {
        do {
            try head.keep(KeptChainHead.Head(size: size, entryHash: hash))
        } catch {
            logger.error("cannot keep the log's chain head beside its checkpoint", metadata: ["size": "\(size)", "error": "\(error)"])
        }
    }

    /// A checkpoint of the first `size` entries: the kept one when it has that size, else a new
    /// one, signed after the store's tree proved consistent with the kept one. A size below the
    /// kept one's is refused (4): older trees are proven from the newest checkpoint.
    func checkpoint(size: Int64, reason: String) async throws -> Signed {
        try await sign(size: size, reason: reason)
    }

    /// How many times a checkpoint is proven again when another was kept meanwhile (by an
    /// batch's commit) before the caller is told to try again (14).
    private static let signingAttempts = 8

    /// The checkpoint of `requested` entries (nil: the whole log as stored now), on `making`:
    /// proven from the kept one and kept in its place, unless an append kept another meanwhile,
    /// in which case it is proven again from that one.
    private func sign(size requested: Int64?, reason: String) async throws -> Signed {
        try await making.run { [self] in
            try await refreshOrigins()
            for _ in 0..<Self.signingAttempts {
                await kept.untilNothingPending()
                // The kept checkpoint is read before the log's size: one an append keeps
                // meanwhile is then caught by `replace`, never taken for a cut log.
                let last = try lastSigned()
                if let last { try requireOrigin(of: last) }
                let size: Int64
                if let requested { size = requested } else { size = try await store.ledgerCount() }
                if let last, size < last.checkpoint.size {
                    // A log shorter than what this daemon signed was cut or rolled back (a
                    // restored copy): refused, not a bad request.
                    let count = try await store.ledgerCount()
                    if count < last.checkpoint.size {
                        throw refuse(Self.shorter(count: count, keptSize: last.checkpoint.size))
                    }
                    throw StepSignError.invalid("the tree size must be at least \(last.checkpoint.size), the latest checkpoint's")
                }
                let root = try await store.ledgerRoot(size: size)
                try await requireRootFromEntries(size: size, root: root)
                if let last {
                    if size == last.checkpoint.size {
                        try requireRoot(root, of: last)
                        return last
                    }
                    let proof = try await store.ledgerConsistencyProof(from: last.checkpoint.size, to: size)
                    guard MerkleProof.verifyConsistency(oldSize: last.checkpoint.size, newSize: size,
                                                        oldRoot: last.checkpoint.rootHash, newRoot: root, proof: proof) else {
                        throw refuse(Self.notExtending(size: size, keptSize: last.checkpoint.size))
                    }
                }
                if let signed = try await signAndKeep(size: size, root: root, replacing: last, reason: reason) { return signed }
            }
            throw StepSignError(.busy, "log checkpoints were signed while this one was being proven: ask again")
        }
    }

    /// Signs the checkpoint of the first `size` entries, whose root is `root`, under the
    /// origin of that size, keeps it in place of `previous` (fsync) before anything else sees
    /// it, then stores, logs and publishes it; nil, signing nothing, when `previous` is no
    /// longer the kept checkpoint. Called on `making` only, after the checks.
    private func signAndKeep(size: Int64, root: [UInt8], replacing previous: Signed?, reason: String) async throws -> Signed? {
        let inToken = keyring.signer.key.tokenID != nil || keyring.logKeys(forSize: size).contains { $0.tokenID != nil }
        let signed = try await threads.run(inToken: inToken) { [self] in try makeSigned(size: size, root: root) }
        // Kept before it leaves: a crash after this cannot make the daemon forget it signed.
        guard try kept.replace(previous, with: signed) else { return nil }
        if let tail = frontier.current, tail.size == size { keepHead(size: size, hash: tail.chainHash) }
        // Stored for the export and the audit; the kept file is what guards the history, so a
        // database that cannot take it now does not undo it (the journal has it too).
        do {
            try await store.appendLogCheckpoint(LogCheckpointRecord(size: size, instance: instance,
                                                                    note: signed.note.serialized, createdAt: Date()))
        } catch {
            logger.error("cannot store a log checkpoint", metadata: ["size": "\(size)", "error": "\(error)"])
        }
        didKeep(signed, reason: reason)
        return signed
    }

    /// A checkpoint of `size` entries with root `root`, signed with the log key (both log keys
    /// within a log-key rotation's overlap) and the active signing key under the origin of that size.
    private func makeSigned(size: Int64, root: [UInt8]) throws -> Signed {
        let origin = knownOrigins.origin(forSize: size)
        let checkpoint = try LogCheckpoint(origin: origin, size: size, rootHash: root)
        var note = try SignedNote(text: checkpoint.text)
        for key in keyring.logKeys(forSize: size) { try note.sign(name: origin, ed25519: key) }
        try note.sign(name: origin, p256: keyring.signer.key)
        return Signed(note: note, checkpoint: checkpoint)
    }

    /// A new kept checkpoint is logged at info with the moment that made it (the journal
    /// holds copies outside the database), counted and published.
    private func didKeep(_ signed: Signed, reason: String) {
        logger.info("log checkpoint", metadata: [
            "size": "\(signed.checkpoint.size)", "root": "\(Base64.encode(signed.checkpoint.rootHash))",
            "reason": "\(reason)", "checkpoint": "\(signed.note.serialized)",
        ])
        StepSignMetric.checkpointTimestamp.set(Date().timeIntervalSince1970)
        StepSignMetric.treeSize.set(Double(signed.checkpoint.size))
        publisher?.checkpointSigned(signed)
    }

    // MARK: Checkpoints of a batch (the log core's, SPEC §5.3, §5.5)

    /// The consistency proof from the newest checkpoint this daemon signed (pending or kept) to
    /// the first checkpoint `commit` makes (SPEC §5.5: a new checkpoint only after a proof from
    /// the kept one), computed from the stored tree below the batch's tail and the batch's own
    /// nodes: read before the transaction, once per batch that reaches a multiple of
    /// `checkpoint_entries`. Nil when there is nothing to prove from, or when that checkpoint is
    /// past the batch's tail (the core reads on, and the signing refuses to sign).
    func proofForCommit(_ commit: LedgerCommit) async throws -> (from: Int64, proof: [[UInt8]])? {
        let newest: Signed?
        do {
            newest = try kept.newest()
        } catch let error as KeptCheckpoint.Unreadable where !error.mayPass {
            // A file that is not a checkpoint refuses the log; a read that failed for a fault
            // that may pass is thrown as it is (at start: exit 74, and the file is read again).
            throw refuse(error.description)
        }
        guard let from = newest?.checkpoint.size, from > 0, from <= commit.expected.seq,
              let size = commit.roots.keys.min(), size > from else { return nil }
        let plan = MerkleTree.consistencyPlan(from: from, to: size)
        var hashes: [MerkleNode: [UInt8]] = [:]
        for (node, hash) in commit.nodes { hashes[node] = hash }
        let stored = try await store.ledgerTreeHashes(plan.nodes.filter { hashes[$0] == nil })
        hashes.merge(stored) { mine, _ in mine }
        do {
            return (from, try plan.hashes(hashes))
        } catch {
            throw refuse("the stored tree lacks a node of the consistency proof from the checkpoint of \(from) this daemon signed to \(size) entries: \(error)")
        }
    }

    /// Signs the checkpoints of a batch before its commit, at each size of `roots` (the roots
    /// the batch's entries make on the tail `prepared`, which the log core computed from
    /// entries), each after the newest checkpoint, and writes the last as pending (with
    /// `fsync`). The first is signed only once `proof` (``proofForCommit(_:)``, from the newest
    /// checkpoint's size) proves that the log extends the newest checkpoint; the next ones in
    /// the batch extend it on the same tail. Their origin is the one the epochs this daemon read
    /// give; the store commits them only if the log still has that many epochs (`epochs`). Nil,
    /// signing nothing, when another checkpoint was kept since the proof was read (the core
    /// reads on and computes again).
    func signForCommit(roots: [Int64: [UInt8]], prepared: LogFrontier.Tail, proof: (from: Int64, proof: [[UInt8]])?) throws
        -> (records: [LogCheckpointRecord], epochs: Int)? {
        let epochs = knownOrigins.epochs.count
        var records: [LogCheckpointRecord] = []
        var previous: Int64?
        do {
            for size in roots.keys.sorted() {
                guard let root = roots[size] else { continue }
                let signed = try kept.signPending { [self] newest in
                    guard let newest else { return try makeSigned(size: size, root: root) }
                    if let previous {
                        // After the batch's own checkpoint: the same tail, one tree.
                        guard newest.checkpoint.size == previous else { return nil }
                    } else {
                        let keptSize = newest.checkpoint.size
                        guard keptSize <= prepared.size, keptSize == (proof?.from ?? 0) || keptSize == 0 else { return nil }
                        try requireOrigin(of: newest)
                        guard size > keptSize else { throw refuse(Self.appendedBelow(index: size - 1, keptSize: keptSize)) }
                        if let proof, keptSize > 0,
                           !MerkleProof.verifyConsistency(oldSize: keptSize, newSize: size, oldRoot: newest.checkpoint.rootHash,
                                                          newRoot: root, proof: proof.proof) {
                            throw refuse(Self.notExtending(size: size, keptSize: keptSize))
                        }
                    }
                    return try makeSigned(size: size, root: root)
                }
                guard let signed else {
                    kept.drop()
                    return nil
                }
                previous = size
                records.append(LogCheckpointRecord(size: size, instance: instance, note: signed.note.serialized, createdAt: Date()))
            }
        } catch let error as KeptCheckpoint.Unreadable where !error.mayPass {
            // A file that is not a checkpoint refuses the log; a read that failed for a fault
            // that may pass is thrown as it is (at start: exit 74, and the file is read again).
            throw refuse(error.description)
        }
        return (records, epochs)
    }

    /// After the append's commit: its checkpoint, if it made one, is kept (and logged and
    /// published); returned.
    func appendCommitted() -> Signed? {
        do {
            guard let signed = try kept.promote() else { return nil }
            didKeep(signed, reason: "entries")
            return signed
        } catch {
            logger.error("cannot keep the log checkpoint of a committed append", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// After a failed append: its checkpoint, if it made one, never left; it is forgotten.
    func appendFailed() {
        kept.drop()
    }

    /// Reads the epochs stored since the last read (an append found more than it knows).
    func refreshOriginsForAppend() async throws {
        try await making.run { [self] in try await refreshOrigins() }
    }

    /// Takes the epochs stored since the last read (``LogEpochs/refresh()``); refuses the log
    /// when one is not what it must be.
    private func refreshOrigins() async throws {
        if let why = try await epochs.refresh() { throw refuse(why) }
    }

    /// What `admin.recover` did (SPEC §5.5).
    struct EpochStart: Sendable {
        /// The epoch started.
        var epoch: LogEpochRecord
        /// The origin before it.
        var previousOrigin: String
        /// The last checkpoint this daemon had signed, which the log no longer extends.
        var previous: Signed
        /// The entries of `previous` from this index on are not in the log.
        var lostFrom: Int64
        /// The `logEpochStarted` event.
        var event: LedgerEntry
        /// The first checkpoint of the new origin.
        var checkpoint: Signed
    }

    /// Starts a new log epoch after a restore that lost entries (`admin.recover`, SPEC §5.5),
    /// in one step on the queue that makes checkpoints: only when entries of the last checkpoint
    /// this daemon signed are not in the log (it has fewer, or another daemon's epoch started
    /// below that checkpoint's size after the same restore); 4 otherwise. `record` appends the
    /// `logEpochStarted` event with the details given (the new origin, the previous one, the
    /// previous checkpoint, the lost range); then the epoch is stored, the first checkpoint of
    /// the new origin signed and kept in place of the old one, and the alarm cleared.
    func startEpoch(now: Date, record: @escaping @Sendable ([(String, JSONValue)]) async throws -> LedgerEntry) async throws -> EpochStart {
        try await making.run { [self] in
            try await refreshOrigins()
            guard let kept = try lastSigned() else {
                throw StepSignError.invalid("this daemon has signed no log checkpoint: there is no history to recover")
            }
            let keptSize = kept.checkpoint.size
            let found = try await store.ledgerCount()
            // Entries this daemon signed from `lostFrom` on are not in the log: those past its
            // end, or, when another daemon on the same database recovered first from the same
            // restore, those past the size that daemon's epoch found.
            let lostFrom = min(found, epochs.foundSize(ofEpochCutting: kept.checkpoint) ?? found)
            guard lostFrom < keptSize else {
                if try await store.ledgerRoot(size: keptSize) == kept.checkpoint.rootHash,
                   kept.checkpoint.origin == knownOrigins.origin(forSize: keptSize) {
                    throw StepSignError.invalid("the log extends the last checkpoint this daemon signed (\(keptSize) entries): nothing was lost, there is nothing to recover")
                }
                throw StepSignError.invalid("the log has \(found) entries, not fewer than the \(keptSize) of the checkpoint this daemon signed, and does not extend it: it was rewritten, not restored from an older copy; restore a copy made before the change, then recover")
            }
            let known = knownOrigins
            let next = known.next
            let event = try await record([
                ("epoch", .int(next.epoch)), ("origin", .string(next.origin)), ("previousOrigin", .string(known.current)),
                ("previousCheckpoint", .string(kept.note.serialized)), ("foundSize", .int(found)),
                ("lostFrom", .int(lostFrom)), ("lostThrough", .int(keptSize - 1)),
            ])
            let epoch = LogEpochRecord(epoch: next.epoch, origin: next.origin, firstIndex: event.seq - 1, createdAt: now)
            try await store.addLogEpoch(epoch)
            // Taken as any epoch is: read back and checked against its event.
            try await refreshOrigins()
            // The log goes on from what was restored: its tree is computed again from its entries.
            frontier.reset()
            let tail = try await fromEntries { [self] in try await frontier.rebuild(from: nil, head: nil) }
            let size = tail.size
            guard try await store.ledgerRoot(size: size) == tail.tree.root else {
                throw refuse("a stored node disagrees with the entries: the stored tree of \(size) entries has another root than its entries")
            }
            do {
                try head.replace(with: KeptChainHead.Head(size: size, entryHash: tail.chainHash))
            } catch {
                logger.error("cannot keep the log's chain head beside its checkpoint", metadata: ["size": "\(size)", "error": "\(error)"])
            }
            guard let signed = try await signAndKeep(size: size, root: try await store.ledgerRoot(size: size), replacing: kept,
                                                     reason: "recover") else {
                throw StepSignError(.busy, "a log checkpoint was kept while the epoch started: ask again")
            }
            alarm.clear()
            logger.notice("a new log epoch started: the log goes on under a new origin", metadata: [
                "origin": "\(next.origin)", "previousOrigin": "\(known.current)",
                "lost": "\(lostFrom)...\(keptSize - 1)", "event": "\(event.signatureID)",
            ])
            return EpochStart(epoch: epoch, previousOrigin: known.current, previous: kept, lostFrom: lostFrom, event: event,
                              checkpoint: signed)
        }
    }

    /// Why entries committed from `firstSeq` on are on a cut log: they took places that the
    /// checkpoint this daemon had signed before their commit, of `keptSize` entries, already
    /// covers (the log's newest entries were removed behind its back, and the store numbered on
    /// from the cut). Raises the alarm; nil when they follow it.
    func landedBelowCheckpoint(firstSeq: Int64, keptSize: Int64) -> String? {
        guard firstSeq - 1 < keptSize else { return nil }
        let why = Self.appendedBelow(index: firstSeq - 1, keptSize: keptSize)
        alarm.report(why)
        return why
    }

    /// The last checkpoint this daemon signed, if any.
    var latest: Signed? { try? lastSigned() }

    /// Refuses (and raises the alarm) when `root`, read from the stored tree at the size of
    /// `kept` (a checkpoint this daemon signed), is not the root it signed.
    func requireRoot(_ root: [UInt8], of kept: Signed) throws {
        guard root == kept.checkpoint.rootHash else {
            throw refuse("the tree of \(kept.checkpoint.size) entries has another root than the checkpoint this daemon signed")
        }
    }

    /// Checks that `hashes` prove `entry` (its JWS, hashed here) in the tree `signed` signed,
    /// before the proof is served (SPEC §5.5: stored nodes are a cache for proofs). A stored
    /// node or entry that disagrees stops signing, as a rolled-back log does.
    func requireInclusion(of entry: LedgerEntry, hashes: [[UInt8]], in signed: Signed) throws {
        let index = entry.seq - 1
        guard MerkleProof.verifyInclusion(leafHash: MerkleHash.leaf(entry.jws.utf8), index: index, size: signed.checkpoint.size,
                                          proof: hashes, root: signed.checkpoint.rootHash) else {
            throw refuse("the stored tree's proof of entry \(index) does not lead to the root of the checkpoint of \(signed.checkpoint.size) entries this daemon signed: a stored node or entry was changed")
        }
    }

    /// Checks that `hashes` prove the tree `signed` signed extends the stored tree of `oldSize`
    /// entries (root `oldRoot`), before the proof is served.
    func requireConsistency(from oldSize: Int64, oldRoot: [UInt8], hashes: [[UInt8]], to signed: Signed) throws {
        guard MerkleProof.verifyConsistency(oldSize: oldSize, newSize: signed.checkpoint.size, oldRoot: oldRoot,
                                            newRoot: signed.checkpoint.rootHash, proof: hashes) else {
            throw refuse("the stored tree's consistency proof from \(oldSize) entries does not lead to the root of the checkpoint of \(signed.checkpoint.size) entries this daemon signed: a stored node was changed")
        }
    }

    /// Publishes the last checkpoint signed again (at start, and when cosignatures of it
    /// arrive, so the published `checkpoint` carries them).
    func republishLatest() {
        if let publisher, let latest { publisher.checkpointSigned(latest) }
    }

    /// Refuses a kept checkpoint whose origin is not the log's at its size (SPEC §5.5: an epoch
    /// started since, by another daemon on the same database, past the size this one signed).
    private func requireOrigin(of kept: Signed) throws {
        let expected = knownOrigins.origin(forSize: kept.checkpoint.size)
        guard kept.checkpoint.origin == expected else {
            throw refuse("the checkpoint this daemon signed names the origin \"\(kept.checkpoint.origin)\", but the log's origin at size \(kept.checkpoint.size) is \"\(expected)\"")
        }
    }

    /// The kept checkpoint, read from the state file once.
    private func lastSigned() throws -> Signed? {
        do {
            return try kept.current()
        } catch let error as KeptCheckpoint.Unreadable where !error.mayPass {
            // A file that is not a checkpoint refuses the log; a read that failed for a fault
            // that may pass is thrown as it is (at start: exit 74, and the file is read again).
            throw refuse(error.description)
        }
    }

    // The refusals stated in more than one place (SPEC §5.5: the log is not what this daemon signed).

    private static func shorter(count: Int64, keptSize: Int64) -> String {
        "the log has \(count) entries, fewer than the \(keptSize) of the checkpoint this daemon signed: it was cut or rolled back"
    }

    private static func notExtending(size: Int64, keptSize: Int64) -> String {
        "the tree of \(size) entries does not extend the checkpoint of \(keptSize) this daemon signed"
    }

    private static func appendedBelow(index: Int64, keptSize: Int64) -> String {
        "entries were appended at log index \(index), below the \(keptSize) of the checkpoint this daemon signed: the log was cut or rolled back"
    }

    private func refuse(_ why: String) -> StorageError {
        alarm.report(why)
        return StorageError.ledgerTreeBroken(why)
    }
}

/// A daemon configured with another `ledger.origin` than the one its log was made with
/// (SPEC §5.5: one origin per log; exit 78).
public struct LogOriginMismatch: Error, CustomStringConvertible {
    /// The log's origin, as the store keeps it.
    public var stored: String
    /// This daemon's `ledger.origin`.
    public var configured: String

    public var description: String {
        "the log's origin is \"\(stored)\", but ledger.origin is \"\(configured)\": one log has one origin; set ledger.origin = \"\(stored)\" (or leave it empty to take the log's)"
    }
}
