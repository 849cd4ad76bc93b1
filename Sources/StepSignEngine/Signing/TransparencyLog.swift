#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOConcurrencyHelpers
import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import StepSignStorage

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

    let origin: String
    private let store: any LedgerStore
    private let keyring: Keyring
    private let alarm: LogAlarm
    private let logger: Logger
    private let stateFile: String
    /// The last checkpoint this daemon signed (read from `stateFile` at the first use).
    private let last = NIOLockedValueBox<Signed??>(nil)
    private let making = SerialExecutionQueue()

    init(origin: String, store: any LedgerStore, keyring: Keyring, alarm: LogAlarm, logger: Logger) {
        self.origin = origin
        self.store = store
        self.keyring = keyring
        self.alarm = alarm
        self.logger = logger
        self.stateFile = keyring.directoryPath + "/" + Self.stateFileName
    }

    /// `ledger.origin`, or its default `stepsign.<host name>/<instance>`.
    static func origin(configured: String, instance: String) -> String {
        guard configured.isEmpty else { return configured }
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "localhost"
        let word = { (text: String) in String(text.unicodeScalars.filter { $0.value > 0x20 && $0 != "+" && $0.value != 0x7f }) }
        return "stepsign." + word(host) + "/" + word(instance)
    }

    /// The note verifier keys of this daemon's checkpoints: its log key (type 0x01) and its
    /// active signing key (type 0x02), both under the origin's name.
    var verifierKeys: [NoteVerifierKey] {
        var keys: [NoteVerifierKey] = []
        if let logKey = try? NoteVerifierKey(name: origin, ed25519: keyring.logKey.publicKey) { keys.append(logKey) }
        if let signing = try? NoteVerifierKey(name: origin, p256: keyring.signer.key.publicKey) { keys.append(signing) }
        return keys
    }

    /// A checkpoint of the first `size` entries: the kept one when it has that size, else a new
    /// one, signed after the store's tree proved consistent with the kept one. A size below the
    /// kept one's is refused (4): older trees are proven from the newest checkpoint.
    func checkpoint(size: Int64) async throws -> Signed {
        try await making.run { [self] in
            let kept = try lastSigned()
            if let kept, size < kept.checkpoint.size {
                // A log shorter than what this daemon signed was cut or rolled back (a restored
                // copy): refused, not a bad request.
                let count = try await store.ledgerCount()
                if count < kept.checkpoint.size {
                    throw refuse("the log has \(count) entries, fewer than the \(kept.checkpoint.size) of the checkpoint this daemon signed: it was cut or rolled back")
                }
                throw StepSignError.invalid("the tree size must be at least \(kept.checkpoint.size), the latest checkpoint's")
            }
            let root = try await store.ledgerRoot(size: size)
            if let kept {
                if size == kept.checkpoint.size {
                    guard root == kept.checkpoint.rootHash else {
                        throw refuse("the tree of \(size) entries has another root than the checkpoint this daemon signed")
                    }
                    return kept
                }
                let proof = try await store.ledgerConsistencyProof(from: kept.checkpoint.size, to: size)
                guard MerkleProof.verifyConsistency(oldSize: kept.checkpoint.size, newSize: size,
                                                    oldRoot: kept.checkpoint.rootHash, newRoot: root, proof: proof) else {
                    throw refuse("the tree of \(size) entries does not extend the checkpoint of \(kept.checkpoint.size) this daemon signed")
                }
            }
            let checkpoint = try LogCheckpoint(origin: origin, size: size, rootHash: root)
            var note = try SignedNote(text: checkpoint.text)
            try note.sign(name: origin, ed25519: keyring.logKey)
            try note.sign(name: origin, p256: keyring.signer.key)
            let signed = Signed(note: note, checkpoint: checkpoint)
            // Kept before it leaves: a crash after this cannot make the daemon forget it signed.
            try SecureFile.writeAtomically(Array(note.serialized.utf8), to: stateFile, mode: 0o600)
            last.withLockedValue { $0 = .some(signed) }
            logger.info("log checkpoint", metadata: ["size": "\(size)", "root": "\(Base64.encode(root))"])
            return signed
        }
    }

    /// The kept checkpoint, read from the state file once.
    private func lastSigned() throws -> Signed? {
        if let cached = last.withLockedValue({ $0 }) { return cached }
        let read: Signed?
        if access(stateFile, F_OK) == 0 {
            let text = String(decoding: try SecureFile.read(stateFile), as: UTF8.self)
            do {
                let note = try SignedNote(parsing: text)
                read = Signed(note: note, checkpoint: try LogCheckpoint(text: note.text))
            } catch {
                throw refuse("the checkpoint kept in \(stateFile) cannot be read: \(error)")
            }
        } else {
            read = nil
        }
        last.withLockedValue { $0 = .some(read) }
        return read
    }

    private func refuse(_ why: String) -> StorageError {
        alarm.report(why)
        return StorageError.ledgerTreeBroken(why)
    }
}
