import StepSignFormat
import Synchronization

/// What a witness knows of one log (one origin): the keys it trusts to sign the log's
/// checkpoints and the latest checkpoint it cosigned.
///
/// ``advance(to:request:store:)`` is the rule of C2SP tlog-witness in one atomic step under
/// the log's lock: compare the old size with the size last cosigned, check the proof, make the
/// new checkpoint durable, and only then move the record, so concurrent submissions never get
/// cosignatures of two trees that are not one the prefix of the other, nor of an older one.
/// Each log has its own lock: one busy log does not hold up another.
final class WitnessedLog: Sendable {
    /// The log's origin (its checkpoints' first line).
    let origin: String
    /// The keys trusted to sign its checkpoints (name = origin).
    let keys: [NoteVerifierKey]
    /// The latest checkpoint cosigned (nil: never); only read and changed under the lock.
    private let latest: Mutex<LogCheckpoint?>

    init(origin: String, keys: [NoteVerifierKey], latest: LogCheckpoint?) {
        self.origin = origin
        self.keys = keys
        self.latest = Mutex(latest)
    }

    /// The size and root last cosigned.
    var current: LogCheckpoint? { latest.withLock { $0 } }

    /// Checks `request` (whose signed checkpoint is `checkpoint`, already verified) against the
    /// latest cosigned checkpoint and, if it extends it, stores it with `store` and makes it the
    /// latest. Throws 409 for an old size that is not the witness's or a root that differs at the
    /// same size, and 422 for a proof that does not verify.
    func advance(to checkpoint: LogCheckpoint, request: AddCheckpointRequest,
                 store: (SignedNote) throws -> Void) throws(WitnessRefusal) {
        try latest.withLock { (latest: inout LogCheckpoint?) throws(WitnessRefusal) in
            let size = latest?.size ?? 0
            guard request.oldSize == size else { throw .conflict(witnessSize: size) }
            if let latest, checkpoint.size == latest.size, checkpoint.rootHash != latest.rootHash {
                throw .conflict(witnessSize: size)
            }
            guard MerkleProof.verifyConsistency(oldSize: size, newSize: checkpoint.size,
                                                oldRoot: latest?.rootHash ?? [], newRoot: checkpoint.rootHash,
                                                proof: request.proof)
            else {
                throw .inconsistent("the proof does not show size \(checkpoint.size) extends size \(size)")
            }
            if latest != checkpoint {
                do { try store(request.checkpoint) } catch { throw .storageFailed("\(error)") }
                latest = checkpoint
            }
        }
    }
}
