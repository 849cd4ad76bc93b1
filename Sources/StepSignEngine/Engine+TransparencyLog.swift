import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import StepSignStorage
import StepSignMetrics

extension Engine {
    /// `getInclusionProof` (SPEC §5.5): the proof that a signature is leaf `logIndex` of the
    /// tree of `treeSize` entries, with a checkpoint of that tree signed by this daemon. For the
    /// session that made the signature, the peer uid that asked for it, or an admin.
    func getInclusionProof(_ signatureID: String, treeSize: Int64?, session: Session) async throws -> Reply {
        let allowed = session.isAdmin || session.signatureIDs.contains(signatureID)
        let uid = session.peer.uid
        let kept = signing.log.latest
        // The common case in one read: the entry with its proof against the last checkpoint
        // this daemon signed, when that covers it and is the tree asked for. An entry the
        // caller may not see is read alone, as an unknown ID reads nothing more.
        let read = try await signing.store.ledgerInclusionRead(signatureID: signatureID) { entry in
            guard allowed || entry.peer.uid == uid, let kept, entry.seq - 1 < kept.checkpoint.size,
                  treeSize == nil || treeSize == kept.checkpoint.size else { return nil }
            return kept.checkpoint.size
        }
        guard let read, allowed || read.entry.peer.uid == uid else {
            // The same answer whether the ID is unknown or someone else's.
            throw StepSignError.invalid("no signature \"\(signatureID)\" of this peer")
        }
        let index = read.entry.seq - 1
        if let proof = read.proof, let kept {
            try signing.log.requireInclusion(of: read.entry, hashes: proof.hashes, in: kept)
            return Self.inclusionReply(index: index, treeSize: proof.treeSize, hashes: proof.hashes,
                                       checkpoint: cosigned(note: kept, proof.cosignatures))
        }
        let signed: TransparencyLog.Signed
        if let treeSize {
            let count = try await signing.store.ledgerCount()
            guard index < treeSize, treeSize <= count else {
                throw StepSignError.invalid("\"treeSize\" must be above the signature's log index \(index) and at most the log's size")
            }
            signed = try await signing.log.checkpoint(size: treeSize, reason: "proof")
        } else {
            // The entry is in the log, so the log's size is above its index.
            signed = try await signing.log.checkpoint(covering: index)
        }
        let hashes = try await signing.store.ledgerInclusionProof(index: index, size: signed.checkpoint.size)
        try signing.log.requireInclusion(of: read.entry, hashes: hashes, in: signed)
        return Self.inclusionReply(index: index, treeSize: signed.checkpoint.size, hashes: hashes,
                                   checkpoint: try await cosigned(signed))
    }

    private static func inclusionReply(index: Int64, treeSize: Int64, hashes: [[UInt8]], checkpoint: String) -> Reply {
        Reply(result: [
            "logIndex": .int(index),
            "treeSize": .int(treeSize),
            "hashes": .array(hashes.map { .string(Base64.encode($0)) }),
            "checkpoint": .string(checkpoint),
        ])
    }

    /// `getConsistencyProof` (SPEC §5.5): the proof that the tree of `toSize` entries extends
    /// the tree of `fromSize`, with a checkpoint of the larger one signed by this daemon.
    func getConsistencyProof(from fromSize: Int64, to toSize: Int64?) async throws -> Reply {
        // The common case in one read: a proof to the last checkpoint this daemon signed, when
        // that is the tree asked for (`toSize`, or the whole log when none is named).
        if let kept = signing.log.latest, fromSize <= kept.checkpoint.size, toSize == nil || toSize == kept.checkpoint.size {
            let size = kept.checkpoint.size
            let read = try await signing.store.ledgerConsistencyRead(from: fromSize, to: size)
            if read.count == size || (toSize != nil && read.count > size) {
                try signing.log.requireRoot(read.root, of: kept)
                try await requireConsistency(from: fromSize, hashes: read.hashes, to: kept)
                return Self.consistencyReply(hashes: read.hashes, checkpoint: cosigned(note: kept, read.cosignatures))
            }
        }
        let signed: TransparencyLog.Signed
        if let toSize {
            let count = try await signing.store.ledgerCount()
            guard fromSize <= toSize, toSize <= count else {
                throw StepSignError.invalid("\"fromSize\" must be at most \"toSize\", and \"toSize\" at most the log's size \(count)")
            }
            signed = try await signing.log.checkpoint(size: toSize, reason: "proof")
        } else {
            // The log's size is read where the checkpoint is made, after the kept one: a batch
            // that keeps a newer one meanwhile is then no reason to refuse.
            signed = try await signing.log.checkpointHead(reason: "proof")
            guard fromSize <= signed.checkpoint.size else {
                throw StepSignError.invalid("\"fromSize\" must be at most the log's size \(signed.checkpoint.size)")
            }
        }
        let hashes = try await signing.store.ledgerConsistencyProof(from: fromSize, to: signed.checkpoint.size)
        try await requireConsistency(from: fromSize, hashes: hashes, to: signed)
        return Self.consistencyReply(hashes: hashes, checkpoint: try await cosigned(signed))
    }

    private static func consistencyReply(hashes: [[UInt8]], checkpoint: String) -> Reply {
        Reply(result: [
            "hashes": .array(hashes.map { .string(Base64.encode($0)) }),
            "checkpoint": .string(checkpoint),
        ])
    }

    /// The consistency proof `hashes` from the tree of `fromSize` entries to `signed`, checked
    /// before it is served (SPEC §5.5): the new root is the one this daemon signed, the old one
    /// the stored tree's; a proof that does not join them is a stored tree that disagrees.
    private func requireConsistency(from fromSize: Int64, hashes: [[UInt8]], to signed: TransparencyLog.Signed) async throws {
        guard fromSize > 0, fromSize < signed.checkpoint.size else { return }
        let oldRoot = try await signing.store.ledgerRoot(size: fromSize)
        try signing.log.requireConsistency(from: fromSize, oldRoot: oldRoot, hashes: hashes, to: signed)
    }

    /// A signed checkpoint as served and exported: its note with the witnesses' stored
    /// cosignatures of its size appended (SPEC §5.6), those that check only.
    func cosigned(_ signed: TransparencyLog.Signed) async throws -> String {
        cosigned(note: signed, try await signing.store.logCosignatures(size: signed.checkpoint.size))
    }

    /// `signed`'s note with its valid stored cosignatures appended (``checkedLines(of:_:)``).
    func cosigned(note signed: TransparencyLog.Signed, _ cosignatures: [LogCosignatureRecord]) -> String {
        signed.note.serialized + checkedLines(of: signed.note.text, cosignatures)
    }

    /// A stored `note` (of the tree of `size` entries) with its valid stored cosignatures appended.
    func cosigned(note: String, size: Int64) async throws -> String {
        guard let text = try? SignedNote(parsing: note).text else { return note }
        return note + checkedLines(of: text, try await signing.store.logCosignatures(size: size))
    }

    /// The lines of `cosignatures` that are valid cosignatures of the checkpoint `text` by the
    /// configured `[[witness]]` each row names, one per witness (SPEC §5.5: a stored
    /// cosignature is a claim until checked, again before it is served). A row that fails is
    /// left out and logged, so that a row written into the database can neither spoil the
    /// daemon's genuine proofs nor, stored beside the witness's genuine line, keep it out.
    func checkedLines(of text: String, _ cosignatures: [LogCosignatureRecord]) -> String {
        guard !cosignatures.isEmpty else { return "" }
        let checked = CheckedCosignatures(text: text, rows: cosignatures, witnesses: settings.witnessKeys)
        for record in checked.failed {
            logger.warning("a stored cosignature does not check against the [[witness]] keys; not served", metadata: [
                "size": "\(record.size)", "witness": "\(record.witness)",
            ])
        }
        return checked.lines
    }

    /// `admin.addCosignatures` (SPEC §5.6): stores witnesses' cosignature lines of the stored
    /// checkpoint of `treeSize`, each checked first against the `[[witness]]` keys over that
    /// checkpoint's text; one line that is not a valid cosignature of a configured witness
    /// refuses them all (4), so a witness client learns at once that something is wrong.
    func addCosignatures(treeSize: Int64, lines: [String], context: RequestContext) async throws -> Reply {
        let witnesses = settings.witnessKeys
        guard !witnesses.isEmpty else { throw StepSignError(.notSupported, "no [[witness]] is configured") }
        guard let stored = try await signing.store.logCheckpoints(afterSize: treeSize - 1, throughSize: treeSize).first,
              let text = try? SignedNote(parsing: stored.note).text
        else { throw StepSignError.invalid("no checkpoint of tree size \(treeSize) is stored") }
        var records: [LogCosignatureRecord] = []
        for line in lines {
            guard let candidate = try? SignedNote(parsing: text + "\n" + line + "\n"), candidate.signatures.count == 1,
                  let cosigner = candidate.cosigners(witnesses).first
            else {
                throw StepSignError.invalid("\"\(line.prefix(100))\" is not a valid cosignature of the checkpoint of size \(treeSize) by a configured witness")
            }
            records.append(LogCosignatureRecord(size: treeSize, witness: cosigner.key.name, line: line, createdAt: context.now))
        }
        // The rows the daemon writes per size and witness stay few: a witness whose stored
        // line of this size verifies already is not stored again (each new cosignature of a
        // size has a new time, so a new line), and a batch stores one line per witness. Rows
        // that do not verify (written behind the daemon's back) do not count, so they never
        // keep the genuine line out; the store's key (size, witness, line) makes that one step.
        let present = CheckedCosignatures(text: text, rows: try await signing.store.logCosignatures(size: treeSize),
                                          witnesses: witnesses)
        var cosigned = Set(present.served.map(\.witness))
        let fresh = records.filter { cosigned.insert($0.witness).inserted }
        if !fresh.isEmpty { try await signing.store.addLogCosignatures(fresh) }
        if signing.log.latest?.checkpoint.size == treeSize { signing.log.republishLatest() }
        StepSignMetric.witnessedTreeSize.set(Double(treeSize))
        signing.witnessWaits.cosigned(size: treeSize)
        logger.info("log cosignatures stored", metadata: [
            "size": "\(treeSize)", "witnesses": "\(records.map(\.witness).joined(separator: ","))",
        ])
        return Reply(result: ["stored": .int(Int64(records.count))])
    }

    /// Whether the last checkpoint this daemon signed carries `ledger.witness_quorum` valid
    /// cosignatures of the configured witnesses (`status.witnessed`).
    func latestCheckpointIsWitnessed(quorum: Int) async throws -> Bool {
        guard let latest = signing.log.latest else { return false }
        let note = try SignedNote(parsing: try await cosigned(latest))
        return note.cosigners(settings.witnessKeys).count >= quorum
    }
}
