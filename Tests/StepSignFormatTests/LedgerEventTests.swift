import Foundation
import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import Testing

/// SPEC §5.4: events are ledger entries signed like signatures, told apart by `typ`; a key
/// revoked at log index R verifies nothing from R on, and everything below it.
@Suite("Ledger events and revocation by index")
struct LedgerEventTests {
    let key: P256PrivateKey
    let other: P256PrivateKey

    init() throws {
        key = try P256PrivateKey.generate()
        other = try P256PrivateKey.generate()
    }

    static let peer = SignaturePeer(uid: 0, pid: 7, comm: "stepsign")

    func event(_ kind: LedgerEvent.Kind, seq: Int, details: [(String, JSONValue)] = [], user: String? = nil) throws -> LedgerEvent {
        LedgerEvent(iss: "stepsign", jti: try UUIDv7.generate(unixMilliseconds: 1_800_000_000_000 + UInt64(seq)), kind: kind,
                    user: user, peer: Self.peer, iat: 1_800_000_000, details: details)
    }

    func signature(seq: Int) throws -> (jti: String, claims: SignatureClaims) {
        var claims = SignatureClaimsTests.claims()
        claims.jti = try UUIDv7.generate(unixMilliseconds: 1_800_000_000_000 + UInt64(seq))
        claims.peer = SignaturePeer(uid: 1000, pid: 42, comm: "app")
        return (claims.jti, claims)
    }

    /// A chained ledger: each element makes the JWS of its seq and names its row's user.
    func ledger(_ makers: [(Int) throws -> (jti: String, jws: String, user: String, iat: Int64, peer: SignaturePeer)]) throws -> [LedgerLink] {
        var previous = LedgerChain.genesisHash
        return try makers.enumerated().map { offset, make in
            let seq = offset + 1
            let made = try make(seq)
            let hash = LedgerChain.entryHash(previous: previous, jws: made.jws)
            defer { previous = hash }
            return LedgerLink(seq: Int64(seq), signatureID: made.jti, payloadSignature: made.jws, prevHash: previous,
                              entryHash: hash, user: made.user, kid: nil, iat: made.iat, peer: made.peer)
        }
    }

    func signed(by signer: P256PrivateKey) -> (Int) throws -> (jti: String, jws: String, user: String, iat: Int64, peer: SignaturePeer) {
        { seq in
            let (jti, claims) = try signature(seq: seq)
            return (jti, try StepSignSignature.make(claims: claims, key: signer, kid: signer.publicKey.thumbprint), claims.sub,
                    claims.iat, claims.peer!)
        }
    }

    func revocation(of revoked: P256PrivateKey, by signer: P256PrivateKey) -> (Int) throws -> (jti: String, jws: String, user: String, iat: Int64, peer: SignaturePeer) {
        { seq in
            let event = try event(.signingKeyRevoked, seq: seq, details: [("kid", .string(revoked.publicKey.thumbprint))])
            return (event.jti, try event.signed(key: signer, kid: signer.publicKey.thumbprint), "", event.iat, event.peer)
        }
    }

    func audit(_ links: [LedgerLink], keys: TrustedKeys) -> LedgerAudit {
        var verifier = LedgerVerifier(options: .init(trustedKeys: keys))
        for link in links where verifier.add(link) {}
        return verifier.finish()
    }

    @Test("an event signs and verifies as stepsign-event+jwt, its claims read back, and it is no signature")
    func roundTrip() throws {
        let made = try event(.deviceKeyEnrolled, seq: 1, details: [("deviceKeyId", .string("k1")), ("label", .string("phone"))],
                             user: "alice")
        let jws = try made.signed(key: key, kid: key.publicKey.thumbprint)
        let trusted = TrustedKeys(keys: [key.publicKey])
        let (read, kid) = try LedgerEvent.verify(jws, trustedKeys: trusted)
        #expect(read == made && kid == key.publicKey.thumbprint)
        #expect(read.kind == .deviceKeyEnrolled && read.user == "alice" && read.detail("label") == "phone")
        #expect(LedgerExportEntry.isEvent(jws))
        #expect(throws: SignatureVerificationError.wrongType(LedgerEvent.headerType)) {
            try StepSignSignature.verify(jws, trustedKeys: trusted)
        }
        #expect(LedgerExportEntry(seq: 1, signatureID: read.jti, payloadSignature: jws, prevHash: "", entryHash: "").kind == "event")
    }

    @Test("a ledger of signatures and events verifies; the row's user and ID columns are checked against the event")
    func mixedLedger() throws {
        let links = try ledger([signed(by: key), { seq in
            let made = try event(.userAdded, seq: seq, user: "bob")
            return (made.jti, try made.signed(key: key, kid: key.publicKey.thumbprint), "bob", made.iat, made.peer)
        }, signed(by: key)])
        let trusted = TrustedKeys(keys: [key.publicKey])
        let ok = audit(links, keys: trusted)
        #expect(ok.ok && ok.entries == 3 && ok.events == 1, "\(ok)")
        var edited = links
        edited[1].user = "mallory"
        #expect(audit(edited, keys: trusted).problem?.contains("user column") == true)
    }

    @Test("a key revoked at index R: its entries below R are valid, one at or after R is reported, from the event alone")
    func revocationByIndex() throws {
        // Index 0 and 1 by `key`, its revocation (by `other`) at index 2, then `key` again at 3.
        let links = try ledger([signed(by: key), signed(by: key), revocation(of: key, by: other), signed(by: other),
                                signed(by: key)])
        let trusted = TrustedKeys(keys: [key.publicKey, other.publicKey])
        #expect(audit(Array(links.prefix(4)), keys: trusted).ok)
        let bad = audit(links, keys: trusted)
        #expect(!bad.ok && bad.firstBadSeq == 5, "\(bad)")
        #expect(bad.problem?.contains("after its revocation at log index 2") == true, "\(bad)")
        // The JWKS's index alone (an export whose revocation event was cut) applies the same rule.
        let fromJWKS = TrustedKeys(keys: [key.publicKey, other.publicKey], revokedAt: [key.publicKey.thumbprint: 2])
        let withoutEvent = try ledger([signed(by: key), signed(by: key), signed(by: key)])
        #expect(audit(withoutEvent, keys: fromJWKS).firstBadSeq == 3)
    }

    @Test("the JWKS carries stepsign_revoked_at; a single signature by a revoked key verifies only at a lower index")
    func jwksAndSingleSignatures() throws {
        let kid = key.publicKey.thumbprint
        let published = TrustedKeys(keys: [key.publicKey, other.publicKey], revokedAt: [kid: 10])
        let json = String(decoding: try JSONEncoder().encode(published.jwks), as: UTF8.self)
        #expect(json.contains("\"stepsign_revoked_at\":10"))
        let read = try TrustedKeys(parsing: json)
        #expect(read.revokedAt == [kid: 10])
        let jws = try signed(by: key)(1).jws
        #expect(try StepSignSignature.verify(jws, trustedKeys: read, logIndex: 9).sub == "alice")
        #expect(throws: SignatureVerificationError.revokedKey(kid: kid, revokedAt: 10, logIndex: 10)) {
            try StepSignSignature.verify(jws, trustedKeys: read, logIndex: 10)
        }
        #expect(throws: SignatureVerificationError.revokedKey(kid: kid, revokedAt: 10, logIndex: nil)) {
            try StepSignSignature.verify(jws, trustedKeys: read)
        }
        #expect(throws: P256KeyError.self) {
            try TrustedKeys(parsing: json.replacingOccurrences(of: "\"stepsign_revoked_at\":10", with: "\"stepsign_revoked_at\":-1"))
        }
    }
}
