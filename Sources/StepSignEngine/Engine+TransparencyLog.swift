import StepSignCrypto
import StepSignFormat
import StepSignProtocol

extension Engine {
    /// `getInclusionProof` (SPEC §5.5): the proof that a signature is leaf `logIndex` of the
    /// tree of `treeSize` entries, with a checkpoint of that tree signed by this daemon. For the
    /// session that made the signature, the peer uid that asked for it, or an admin.
    func getInclusionProof(_ signatureID: String, treeSize: Int64?, session: Session) async throws -> Reply {
        guard let entry = try await store.ledgerEntry(signatureID: signatureID),
              session.isAdmin || session.signatureIDs.contains(signatureID) || entry.peer.uid == session.peer.uid
        else {
            // The same answer whether the ID is unknown or someone else's.
            throw StepSignError.invalid("no signature \"\(signatureID)\" of this peer")
        }
        let index = entry.seq - 1
        let signed: TransparencyLog.Signed
        if let treeSize {
            let count = try await store.ledgerCount()
            guard index < treeSize, treeSize <= count else {
                throw StepSignError.invalid("\"treeSize\" must be above the signature's log index \(index) and at most the log's size")
            }
            signed = try await log.checkpoint(size: treeSize)
        } else {
            // The entry is in the log, so the log's size is above its index.
            signed = try await log.checkpoint(covering: index)
        }
        let hashes = try await store.ledgerInclusionProof(index: index, size: signed.checkpoint.size)
        return Reply(result: [
            "logIndex": .int(index),
            "treeSize": .int(signed.checkpoint.size),
            "hashes": .array(hashes.map { .string(Base64.encode($0)) }),
            "checkpoint": .string(signed.note.serialized),
        ])
    }

    /// `getConsistencyProof` (SPEC §5.5): the proof that the tree of `toSize` entries extends
    /// the tree of `fromSize`, with a checkpoint of the larger one signed by this daemon.
    func getConsistencyProof(from fromSize: Int64, to toSize: Int64?) async throws -> Reply {
        let count = try await store.ledgerCount()
        let size = toSize ?? count
        guard fromSize <= size, size <= count else {
            throw StepSignError.invalid("\"fromSize\" must be at most \"toSize\", and \"toSize\" at most the log's size \(count)")
        }
        let (signed, hashes) = try await log.checkpoint(size: size, consistencyFrom: fromSize)
        return Reply(result: [
            "hashes": .array(hashes.map { .string(Base64.encode($0)) }),
            "checkpoint": .string(signed.note.serialized),
        ])
    }
}
