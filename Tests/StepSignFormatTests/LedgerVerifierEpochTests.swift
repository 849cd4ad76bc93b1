import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import Testing

/// ``LedgerVerifier`` over a log with epochs (SPEC §5.5, `admin.recover`): the tree is one tree;
/// a checkpoint of `size` entries must carry the origin of the last `logEpochStarted` event
/// below `size` (the first origin before any), and each epoch must follow the one before.
@Suite("LedgerVerifier with log epochs")
struct LedgerVerifierEpochTests {
    static let first = "stepsign.example/epochs"
    static let second = first + "/epoch2"
    let events = try! LedgerEventTests()

    /// Four signatures, the epoch event (index 4), three more signatures.
    func log(origin: String = Self.second, previous: String = Self.first) throws -> [LedgerLink] {
        let signer = events.key
        let epochEvent: (Int) throws -> (jti: String, jws: String, user: String, iat: Int64, peer: SignaturePeer) = { seq in
            let event = try events.event(.logEpochStarted, seq: seq, details: [
                ("epoch", .int(2)), ("origin", .string(origin)), ("previousOrigin", .string(previous)),
                ("lostFrom", .int(4)), ("lostThrough", .int(9)),
            ])
            return (event.jti, try event.signed(key: signer, kid: signer.publicKey.thumbprint), "", event.iat, event.peer)
        }
        let signature = events.signed(by: signer)
        return try events.ledger([signature, signature, signature, signature, epochEvent, signature, signature, signature])
    }

    func note(_ links: [LedgerLink], size: Int, origin: String) throws -> String {
        let leaves = links.prefix(size).map { MerkleHash.leaf($0.payloadSignature.utf8) }
        var note = try SignedNote(text: LogCheckpoint(origin: origin, size: Int64(size),
                                                      rootHash: MerkleTreeTests.mth(leaves[...])).text)
        try note.sign(name: origin, p256: events.key)
        return note.serialized
    }

    func audit(_ links: [LedgerLink], notes: [String]) -> LedgerAudit {
        var verifier = LedgerVerifier(options: .init(trustedKeys: TrustedKeys(keys: [events.key.publicKey])))
        for note in notes { verifier.addLogCheckpoint(note) }
        for link in links where verifier.add(link) {}
        return verifier.finish()
    }

    @Test("checkpoints up to the event's index carry the first origin, later ones the epoch's")
    func epochsSplitTheOrigins() throws {
        let links = try log()
        let notes = [try note(links, size: 2, origin: Self.first), try note(links, size: 4, origin: Self.first),
                     try note(links, size: 5, origin: Self.second), try note(links, size: 8, origin: Self.second)]
        let audit = audit(links, notes: notes)
        #expect(audit.ok, "\(audit)")
        #expect(audit.checkpoints == 4 && audit.events == 1)
    }

    @Test("a checkpoint under the wrong origin for its size is a problem, on either side of the event")
    func wrongOrigin() throws {
        let links = try log()
        let oldNameAfter = audit(links, notes: [try note(links, size: 4, origin: Self.first),
                                                try note(links, size: 6, origin: Self.first)])
        #expect(!oldNameAfter.ok && oldNameAfter.problem?.contains("size 6 names the origin") == true, "\(oldNameAfter)")
        let newNameBefore = audit(links, notes: [try note(links, size: 4, origin: Self.second),
                                                 try note(links, size: 8, origin: Self.second)])
        #expect(!newNameBefore.ok && newNameBefore.problem?.contains("size 4 names the origin") == true, "\(newNameBefore)")
        // Without the event (the same entries, another origin from the middle on): one origin per log.
        let plain = try events.ledger(Array(repeating: events.signed(by: events.key), count: 8))
        let renamed = audit(plain, notes: [try note(plain, size: 4, origin: Self.first), try note(plain, size: 8, origin: Self.second)])
        #expect(!renamed.ok && renamed.problem?.contains("origin") == true, "\(renamed)")
    }

    @Test("an epoch that does not follow the log's origin, or reuses one, is a problem")
    func epochChain() throws {
        let stranger = try log(previous: "stepsign.example/elsewhere")
        let notFollowing = audit(stranger, notes: [try note(stranger, size: 4, origin: Self.first),
                                                   try note(stranger, size: 8, origin: Self.second)])
        // The first epoch names the log's first origin: the checkpoints before it must carry it.
        #expect(!notFollowing.ok && notFollowing.problem?.contains("size 4 names the origin") == true, "\(notFollowing)")
        let same = try log(origin: Self.first)
        let reused = audit(same, notes: [try note(same, size: 8, origin: Self.first)])
        #expect(!reused.ok && reused.problem?.contains("reuses the origin") == true, "\(reused)")
    }
}
