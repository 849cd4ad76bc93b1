import StepSignCrypto
import StepSignFormat
import Testing

/// ``LedgerVerifier`` on ledgers built here: what an old ledger (no peer claims, no
/// checkpoints) keeps, and what the stretch rule, checkpoints and revoked keys report.
@Suite("LedgerVerifier")
struct LedgerVerifierTests {
    let key: P256PrivateKey
    let trusted: TrustedKeys

    init() throws {
        key = try P256PrivateKey.generate()
        trusted = TrustedKeys(keys: [key.publicKey])
    }

    var kid: String { key.publicKey.thumbprint }

    /// `count` chained links; claims carry `peer` from `peerFrom` on (1-based; nil: never).
    func ledger(_ count: Int, peerFrom: Int? = 1) throws -> [LedgerLink] {
        var previous = LedgerChain.genesisHash
        return try (1...count).map { seq in
            var claims = SignatureClaimsTests.claims()
            claims.jti = try UUIDv7.generate(unixMilliseconds: 1_700_000_000_000 + UInt64(seq))
            if let peerFrom, seq >= peerFrom { claims.peer = SignaturePeer(uid: 1000, pid: 42, comm: "app") }
            let jws = try StepSignSignature.make(claims: claims, key: key, kid: kid)
            let hash = LedgerChain.entryHash(previous: previous, jws: jws)
            defer { previous = hash }
            return LedgerLink(seq: Int64(seq), signatureID: claims.jti, payloadSignature: jws, prevHash: previous, entryHash: hash,
                              user: "alice", kid: kid, iat: claims.iat, peer: claims.peer)
        }
    }

    func checkpoint(_ link: LedgerLink) throws -> String {
        try LedgerCheckpoint(iss: "stepsign", seq: link.seq, entryHash: link.entryHash, iat: 1_700_000_000).signed(key: key, kid: kid)
    }

    func run(_ links: [LedgerLink], checkpoints: [String] = [], entries: Int? = 4, revoked: Set<String> = []) -> LedgerAudit {
        var verifier = LedgerVerifier(options: .init(trustedKeys: trusted, revokedKids: revoked, checkpointEntries: entries))
        for checkpoint in checkpoints { verifier.addCheckpoint(checkpoint) }
        for link in links where verifier.add(link) {}
        return verifier.finish()
    }

    @Test("a ledger from before peer claims and checkpoints verifies, however long")
    func legacyLedger() throws {
        let audit = run(try ledger(10, peerFrom: nil))
        #expect(audit.ok, "\(audit)")
        #expect(audit.entries == 10)
    }

    @Test("old entries may be high-S (made before low-S); an entry with a peer claim may not")
    func highSOnlyInOldEntries() throws {
        func highS(_ link: LedgerLink) throws -> LedgerLink {
            var link = link
            let parts = link.payloadSignature.split(separator: ".").map(String.init)
            link.payloadSignature = parts[0] + "." + parts[1] + "." + Base64URL.encode(ECDSALowS.twin(try #require(Base64URL.decode(parts[2]))))
            return link
        }
        func rechained(_ links: [LedgerLink]) -> [LedgerLink] {
            var previous = LedgerChain.genesisHash
            return links.map { link in
                var link = link
                link.prevHash = previous
                link.entryHash = LedgerChain.entryHash(previous: previous, jws: link.payloadSignature)
                previous = link.entryHash
                return link
            }
        }
        var old = try ledger(3, peerFrom: nil)
        old[1] = try highS(old[1])
        #expect(run(rechained(old)).ok)
        var new = try ledger(3)
        new[1] = try highS(new[1])
        let audit = run(rechained(new))
        #expect(audit.firstBadSeq == 2)
        #expect(audit.problem?.contains("high-S") == true, "\(audit)")
    }

    @Test("after an old run, new entries need a checkpoint every checkpoint_entries")
    func legacyThenNew() throws {
        let links = try ledger(12, peerFrom: 6)
        let missing = run(links)
        #expect(!missing.ok)
        #expect(missing.firstBadSeq == 10, "\(missing)") // 6…9 are four entries after the old run
        let covered = run(links, checkpoints: [try checkpoint(links[8])])
        #expect(covered.ok, "\(covered)")
        #expect(covered.checkpoints == 1)
    }

    @Test("a checkpoint that signs another hash, or one past the end, is reported")
    func checkpointMismatch() throws {
        let links = try ledger(6)
        var other = links[2]
        other.entryHash = [UInt8](repeating: 7, count: 32)
        let mismatch = run(links, checkpoints: [try checkpoint(other)], entries: nil)
        #expect(mismatch.firstBadSeq == 3)
        let longer = try ledger(8)
        let beyond = run(links, checkpoints: [try checkpoint(longer[7])], entries: nil)
        #expect(!beyond.ok)
        #expect(beyond.problem?.contains("ends at 6") == true, "\(beyond)")
    }

    @Test("entries of a revoked key are reported, not hidden; the walk goes on")
    func revokedKey() throws {
        let links = try ledger(3)
        var verifier = LedgerVerifier(options: .init(trustedKeys: TrustedKeys(keys: [try P256PrivateKey.generate().publicKey]),
                                                     revokedKids: [kid]))
        for link in links {
            let added = verifier.add(link)
            #expect(added)
        }
        let audit = verifier.finish()
        #expect(!audit.ok)
        #expect(audit.entries == 3)
        #expect(audit.firstBadSeq == 1)
        #expect(audit.problem?.contains("3 entries are signed by a revoked key") == true, "\(audit)")
    }

    @Test("a column that differs from the claims stops the walk at its entry", arguments: ["user", "iat", "kid", "peer"])
    func columnMismatch(column: String) throws {
        var links = try ledger(4)
        switch column {
        case "user": links[1].user = "mallory"
        case "iat": links[1].iat = 1
        case "kid": links[1].kid = "other"
        default: links[1].peer = SignaturePeer(uid: 0, pid: 1, comm: "init")
        }
        let audit = run(links, entries: nil)
        #expect(audit.firstBadSeq == 2)
        #expect(audit.problem?.contains(column) == true, "\(audit)")
    }

    @Test("checking in batches (signatures on every core) gives the outcome of one entry at a time")
    func batchesMatchOneByOne() throws {
        var links = try ledger(40)
        links[25].user = "mallory"
        for candidate in [try ledger(40), links] {
            var batched = LedgerVerifier(options: .init(trustedKeys: trusted, checkpointEntries: 100))
            batched.add(contentsOf: Array(candidate[..<16]))
            batched.add(contentsOf: Array(candidate[16...]))
            #expect(batched.finish() == run(candidate, entries: 100))
        }
        #expect(run(links, entries: 100).firstBadSeq == 26)
    }
}
