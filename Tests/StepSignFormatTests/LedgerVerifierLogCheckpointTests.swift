import StepSignCrypto
import StepSignFormat
import Testing

/// ``LedgerVerifier`` with the log's C2SP checkpoints (SPEC §5.5): a note pins the Merkle root
/// of the first `size` entries, so an entry changed, removed, inserted or reordered and
/// re-chained below one is caught, as is a log cut below one kept elsewhere; a note of another
/// origin, of an unknown key, or of a key revoked below its size counts for nothing.
@Suite("LedgerVerifier with log checkpoints")
struct LedgerVerifierLogCheckpointTests {
    static let origin = "stepsign.example/verifier"
    let base = try! LedgerVerifierTests()

    /// A note of the tree of `links`' first `size` entries, signed with the P-256 key (type
    /// 0x02) and, if given, an Ed25519 log key.
    func note(_ links: [LedgerLink], size: Int, origin: String = Self.origin, key: P256PrivateKey? = nil,
              logKey: Ed25519PrivateKey? = nil) throws -> String {
        let leaves = links.prefix(size).map { MerkleHash.leaf($0.payloadSignature.utf8) }
        var note = try SignedNote(text: LogCheckpoint(origin: origin, size: Int64(size),
                                                      rootHash: MerkleTreeTests.mth(leaves[...])).text)
        if let logKey { try note.sign(name: origin, ed25519: logKey) }
        try note.sign(name: origin, p256: key ?? base.key)
        return note.serialized
    }

    func run(_ links: [LedgerLink], notes: [String], required: String? = nil, revokedAt: [String: Int64]? = nil,
             logKeys: [NoteVerifierKey] = [], trusted: TrustedKeys? = nil) throws -> LedgerAudit {
        var verifier = LedgerVerifier(options: .init(trustedKeys: trusted ?? base.trusted, checkpointEntries: 4,
                                                     revokedAt: revokedAt, logKeys: logKeys))
        for note in notes { verifier.addLogCheckpoint(note) }
        if let required { try verifier.requireLogCheckpoint(required) }
        for link in links where verifier.add(link) {}
        return verifier.finish()
    }

    /// `links` with the hash chain made again from the first (as a database writer would).
    static func rechained(_ links: [LedgerLink]) -> [LedgerLink] {
        var previous = LedgerChain.genesisHash
        return links.enumerated().map { offset, link in
            var link = link
            link.seq = Int64(offset + 1)
            link.prevHash = previous
            link.entryHash = LedgerChain.entryHash(previous: previous, jws: link.payloadSignature)
            previous = link.entryHash
            return link
        }
    }

    @Test("notes every few entries cover the stretch rule and verify")
    func notesCoverTheLog() throws {
        let links = try base.ledger(12)
        let audit = try run(links, notes: [try note(links, size: 4), try note(links, size: 8), try note(links, size: 12)])
        #expect(audit.ok, "\(audit)")
        #expect(audit.checkpoints == 3)
        // Without them the stretch rule reports the run.
        #expect(try run(links, notes: []).ok == false)
    }

    @Test("an entry removed, reordered or replaced and re-chained below a note is caught at the note")
    func rechainedBelowANote() throws {
        let links = try base.ledger(12)
        let notes = [try note(links, size: 4), try note(links, size: 8), try note(links, size: 12)]
        var removed = links
        removed.remove(at: 5)
        removed.append(try base.ledger(1)[0])
        var reordered = links
        reordered.swapAt(5, 6)
        var replaced = links
        replaced[6] = try base.ledger(7)[6]
        for (what, changed) in [("removed", removed), ("reordered", reordered), ("replaced", replaced)] {
            let audit = try run(Self.rechained(changed), notes: notes)
            #expect(audit.ok == false, "\(what)")
            #expect(audit.firstBadSeq == 8, "\(what): \(audit)")
            #expect(audit.problem?.contains("another Merkle root") == true, "\(what): \(audit)")
        }
    }

    @Test("a log shorter than a stored note, or than one kept elsewhere, is reported")
    func truncated() throws {
        let links = try base.ledger(12)
        let stored = try run(Array(links.prefix(10)), notes: [try note(links, size: 4), try note(links, size: 8), try note(links, size: 12)])
        #expect(stored.ok == false && stored.firstBadSeq == 11, "\(stored)")
        let kept = try run(Array(links.prefix(8)), notes: [try note(links, size: 4), try note(links, size: 8)],
                           required: try note(links, size: 12))
        #expect(kept.ok == false && kept.problem?.contains("fewer than the 12") == true, "\(kept)")
        #expect(try run(links, notes: [try note(links, size: 4), try note(links, size: 8)], required: try note(links, size: 12)).ok)
    }

    @Test("a note of another origin, an unknown key or a key revoked below its size is a problem")
    func untrustedNotes() throws {
        let links = try base.ledger(8)
        let good = try note(links, size: 4)
        let otherOrigin = try run(links, notes: [good, try note(links, size: 8, origin: "stepsign.example/other")])
        #expect(otherOrigin.ok == false && otherOrigin.problem?.contains("origin") == true, "\(otherOrigin)")
        let stranger = try run(links, notes: [good, try note(links, size: 8, key: try P256PrivateKey.generate())])
        #expect(stranger.ok == false && stranger.problem?.contains("does not verify") == true, "\(stranger)")
        // A second trusted key, revoked at index 6, signs notes (the entries are the first's):
        // a note of 8 entries by it alone is not valid, one of 4 is.
        let second = try P256PrivateKey.generate()
        let keys = TrustedKeys(keys: [base.key.publicKey, second.publicKey])
        let revokedAt = [second.publicKey.thumbprint: Int64(6)]
        let early = try run(links, notes: [try note(links, size: 4, key: second), good], revokedAt: revokedAt, trusted: keys)
        #expect(early.ok, "\(early)")
        let late = try run(links, notes: [good, try note(links, size: 8, key: second)], revokedAt: revokedAt, trusted: keys)
        #expect(late.ok == false && late.problem?.contains("revoked") == true, "\(late)")
        // The same note with a valid log key's line too still counts.
        let logKey = try Ed25519PrivateKey.generate()
        let verifier = try NoteVerifierKey(name: Self.origin, ed25519: logKey.publicKey)
        let both = try run(links, notes: [good, try note(links, size: 8, key: second, logKey: logKey)],
                           revokedAt: revokedAt, logKeys: [verifier], trusted: keys)
        #expect(both.ok, "\(both)")
    }

    @Test("a tampered note body or signature is a problem")
    func tamperedNote() throws {
        let links = try base.ledger(8)
        let good = try note(links, size: 8)
        let body = good.replacingOccurrences(of: "\n8\n", with: "\n7\n")
        #expect(try run(links, notes: [body]).ok == false)
        var signature = Array(good.utf8)
        signature[signature.count - 5] ^= 0x01
        #expect(try run(links, notes: [String(decoding: signature, as: UTF8.self)]).ok == false)
        #expect(try run(links, notes: ["not a note"]).ok == false)
    }
}
