import StepSignFormat
import StepSignProtocol
import StepSignStorage

extension Engine {
    /// `waitForProof` (SPEC §3.2, §5.6): the C2SP tlog-proof of a signature once a checkpoint
    /// covering it carries `quorum` valid cosignatures of the `[[witness]]` keys (all of them
    /// by default), for the session that made the signature, the peer uid that asked for it,
    /// or an admin. A checkpoint is asked of `stepsign-witnessd` at once (waiters that arrive
    /// together share it); error 14 after `timeoutSeconds` (nothing is lost: ask again).
    func waitForProof(_ signatureID: String, quorum asked: Int?, timeoutSeconds: Int, session: Session) async throws -> Reply {
        let deadline = ContinuousClock.now + .seconds(timeoutSeconds)
        let witnesses = settings.witnessKeys
        guard !witnesses.isEmpty else { throw StepSignError(.notSupported, "no [[witness]] is configured") }
        let quorum = asked ?? witnesses.count
        guard quorum <= witnesses.count else {
            throw StepSignError.invalid("\"quorum\" must be at most the \(witnesses.count) configured witnesses")
        }
        let allowed = session.isAdmin || session.signatureIDs.contains(signatureID)
        let uid = session.peer.uid
        guard let read = try await signing.store.ledgerInclusionRead(signatureID: signatureID, treeSize: { _ in nil }),
              allowed || read.entry.peer.uid == uid else {
            // The same answer whether the ID is unknown or someone else's.
            throw StepSignError.invalid("no signature \"\(signatureID)\" of this peer")
        }
        let entry = read.entry
        let index = entry.seq - 1
        // Registered before the first look, so cosignatures stored in between still wake it.
        guard let ticket = signing.witnessWaits.register(index: index, uid: uid) else {
            throw StepSignError(.busy, "too many waitForProof requests of this peer wait already; ask again later")
        }
        defer { signing.witnessWaits.unregister(ticket) }
        var size = signing.log.latest.map(\.checkpoint.size) ?? 0
        var asked = false
        while true {
            if size > index, let proof = try await witnessedProof(of: entry, treeSize: size, quorum: quorum, witnesses: witnesses) {
                return Reply(result: ["proof": .string(proof.serialized)])
            }
            if !asked {
                signing.witnessWaits.request()
                asked = true
            }
            guard let cosigned = await signing.witnessWaits.next(ticket, until: deadline) else {
                throw StepSignError(.busy, "no checkpoint covering \(signatureID) carries \(quorum) witness cosignatures yet; ask again")
            }
            size = cosigned
        }
    }

    /// The tlog-proof of `entry` against the stored checkpoint of `treeSize` entries with its
    /// valid stored cosignatures, when at least `quorum` of `witnesses` cosigned it; nil when
    /// fewer did (or no checkpoint of that size is stored). The proof is checked as a verifier
    /// will check it before it is served; a path that does not lead to the root is a stored tree
    /// that disagrees (SPEC §5.5).
    private func witnessedProof(of entry: LedgerEntry, treeSize: Int64, quorum: Int,
                                witnesses: [NoteVerifierKey]) async throws -> TlogProof? {
        let signed: TransparencyLog.Signed
        if let latest = signing.log.latest, latest.checkpoint.size == treeSize {
            signed = latest
        } else {
            // A checkpoint the log signed before (or another daemon of the log): its note as
            // stored, a claim until its signature checks with the log's keys.
            guard let record = try await signing.store.logCheckpoints(afterSize: treeSize - 1, throughSize: treeSize).first,
                  let note = try? SignedNote(parsing: record.note), let checkpoint = try? LogCheckpoint(text: note.text),
                  checkpoint.size == treeSize,
                  (try? note.verifiedKeys(signing.log.verifierKeys.filter { $0.name == checkpoint.origin })) != nil
            else { return nil }
            signed = TransparencyLog.Signed(note: note, checkpoint: checkpoint)
        }
        guard let read = try await signing.store.ledgerInclusionRead(signatureID: entry.signatureID, treeSize: { _ in treeSize }),
              let path = read.proof, path.treeSize == treeSize else { return nil }
        let note = try SignedNote(parsing: cosigned(note: signed, path.cosignatures))
        guard note.cosigners(witnesses).count >= quorum else { return nil }
        try signing.log.requireInclusion(of: read.entry, hashes: path.hashes, in: signed)
        let proof = try TlogProof(index: entry.seq - 1, hashes: path.hashes, checkpoint: note)
        _ = try proof.verify(leaf: Array(read.entry.jws.utf8), logKeys: signing.log.verifierKeys, witnesses: witnesses, quorum: quorum)
        return proof
    }
}
