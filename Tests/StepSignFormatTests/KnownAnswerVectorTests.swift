import Foundation
import StepSignCrypto
import StepSignFormat
import StepSignTestSupport
import Testing

/// `Tests/Vectors/known-answer.json`, computed by `Tests/Vectors/generate.py` with Python's
/// hashlib and `cryptography` from SPEC §2 and §5 (not by stepsign): the claims and header our
/// signer writes for the vector's inputs are its bytes exactly, its fixed signature verifies
/// here and in `stepsign-verify`, one changed bit is refused, and the ledger chain of three
/// entries has exactly its hashes.
@Suite("Known-answer vectors")
final class KnownAnswerVectorTests: Sendable {
    let vectors: KnownAnswerVectors
    let key: P256PrivateKey
    let trusted: TrustedKeys
    let dir: URL
    let keysPEM: URL

    init() throws {
        vectors = try KnownAnswerVectors.load()
        key = try P256PrivateKey(pkcs8PEM: vectors.key.privateKeyPKCS8PEM)
        trusted = TrustedKeys(keys: [try P256PublicKey(spkiPEM: vectors.key.publicKeySPKIPEM)])
        dir = try TemporaryDirectory("tests").url
        keysPEM = dir.appendingPathComponent("keys.pem")
        try vectors.key.publicKeySPKIPEM.write(to: keysPEM, atomically: true, encoding: .utf8)
    }

    deinit {
        try? FileManager.default.removeItem(at: dir)
    }

    /// The claims the signer builds from the vector's inputs (as `Signer.sign` does).
    var claims: SignatureClaims {
        let inputs = vectors.signature.inputs
        return SignatureClaims(
            iss: inputs.iss, sub: inputs.sub, jti: inputs.jti, iat: inputs.iat, payload: inputs.payload,
            payloadLength: inputs.payloadLength, reason: inputs.reason, authLevel: inputs.authLevel,
            authenticatorType: inputs.authenticatorType, authenticatorUsed: inputs.authenticatorUsed,
            peer: SignaturePeer(uid: inputs.peer.uid, pid: inputs.peer.pid, comm: inputs.peer.comm))
    }

    /// `compact` with bit `bit` of its decoded part `part` (0 header, 1 payload, 2 signature) flipped.
    static func flipping(bit: Int, ofPart part: Int, in compact: String) throws -> String {
        var parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var bytes = try #require(Base64URL.decode(parts[part]))
        bytes[bit / 8] ^= 1 << (bit % 8)
        parts[part] = Base64URL.encode(bytes)
        return parts.joined(separator: ".")
    }

    // MARK: the signature

    @Test("the claims JSON for the vector's inputs is the vector's payload byte for byte (escapes, UTF-8, member order)")
    func claimsBytes() {
        #expect(claims.jsonBytes == Array(vectors.signature.payloadJSON.utf8))
        #expect(claims.payloadLength == claims.payload.count, "the vector's length counts grapheme clusters")
    }

    @Test("the protected header for the vector's kid is the vector's header byte for byte")
    func headerBytes() {
        #expect(key.publicKey.thumbprint == vectors.key.kid)
        #expect(StepSignSignature.headerJSON(kid: vectors.key.kid) == Array(vectors.signature.headerJSON.utf8))
    }

    @Test("a signature made now from the vector's inputs has exactly the vector's signing input, and verifies")
    func signingInputBytes() throws {
        let compact = try StepSignSignature.make(claims: claims, key: key, kid: vectors.key.kid)
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        #expect("\(parts[0]).\(parts[1])" == vectors.signature.signingInput)
        #expect(try StepSignSignature.verify(compact, trustedKeys: trusted) == claims)
    }

    @Test("the vector's fixed JWS verifies and gives back the inputs as claims")
    func fixedSignatureVerifies() throws {
        #expect(vectors.signature.jws == vectors.signature.signingInput + "."
            + Base64URL.encode(try #require(Hex.decode(vectors.signature.signatureHex))))
        #expect(try StepSignSignature.verify(vectors.signature.jws, trustedKeys: trusted) == claims)
    }

    @Test("one bit changed in the header, the claims or the signature is refused", arguments: [
        (0, 5), (1, 0), (1, 200), (2, 0), (2, 511),
    ])
    func oneBitChangeIsRefused(part: Int, bit: Int) throws {
        let forged = try Self.flipping(bit: bit, ofPart: part, in: vectors.signature.jws)
        #expect(throws: SignatureVerificationError.self) { try StepSignSignature.verify(forged, trustedKeys: trusted) }
    }

    @Test("stepsign-verify accepts the fixed JWS (exit 0) and refuses it with one signature bit changed (exit 1)")
    func stepsignVerifyCLI() throws {
        let verifier = try Binaries.stepsignVerify().path
        let valid = try Tools.run([verifier, "--keys", keysPEM.path, "--payload", vectors.signature.inputs.payload,
                                   "--user", "alice", vectors.signature.jws])
        #expect(valid.status == 0, "\(valid.stdout)\(valid.stderr)")
        let forged = try Self.flipping(bit: 100, ofPart: 2, in: vectors.signature.jws)
        let refused = try Tools.run([verifier, "--keys", keysPEM.path, forged])
        #expect(refused.status == 1, "\(refused.stdout)\(refused.stderr)")
    }

    // MARK: the chain

    @Test("each entry's SHA-256(JWS), previous hash and entry hash are the vector's, from the genesis hash")
    func chainHashes() throws {
        #expect(Hex.encode(LedgerChain.genesisHash) == vectors.chain.genesisPrevHash)
        var previous = LedgerChain.genesisHash
        for entry in vectors.chain.entries {
            #expect(Hex.encode(LedgerChain.jwsDigest(entry.jws)) == entry.jwsSHA256, "seq \(entry.seq)")
            #expect(Hex.encode(previous) == entry.prevHash, "seq \(entry.seq)")
            let hash = LedgerChain.entryHash(previous: previous, jws: entry.jws)
            #expect(Hex.encode(hash) == entry.entryHash, "seq \(entry.seq)")
            previous = hash
        }
        #expect(vectors.chain.entries.map(\.seq) == [1, 2, 3])
    }

    /// The vector's chain as ledger links, read back through their hex.
    func links() throws -> [LedgerLink] {
        try vectors.chain.entries.map { entry in
            let claims = try StepSignSignature.verify(entry.jws, trustedKeys: trusted)
            return LedgerLink(seq: entry.seq, signatureID: claims.jti, payloadSignature: entry.jws,
                              prevHash: try #require(Hex.decode(entry.prevHash)),
                              entryHash: try #require(Hex.decode(entry.entryHash)), user: claims.sub)
        }
    }

    @Test("the chain audits clean; with entries 2 and 3 swapped it breaks at 2")
    func chainAudit() throws {
        let links = try links()
        #expect(LedgerChain.audit(links) == LedgerAudit(ok: true, entries: 3, firstBadSeq: nil))
        let swapped = [links[0], links[2], links[1]]
        #expect(LedgerChain.audit(swapped).firstBadSeq == 2)
    }

    @Test("stepsign-verify ledger accepts the chain as an export (exit 0) and refuses it with one entry-hash bit changed (exit 1)")
    func stepsignVerifyLedger() throws {
        let verifier = try Binaries.stepsignVerify().path
        let entries = try links().map(LedgerExportEntry.init)
        func write(_ entries: [LedgerExportEntry], _ name: String) throws -> String {
            let encoder = JSONEncoder()
            let lines = try entries.map { String(decoding: try encoder.encode($0), as: UTF8.self) + "\n" }
            let file = dir.appendingPathComponent(name)
            try lines.joined().write(to: file, atomically: true, encoding: .utf8)
            return file.path
        }
        let intact = try Tools.run([verifier, "ledger", try write(entries, "ledger.jsonl"), "--keys", keysPEM.path])
        #expect(intact.status == 0, "\(intact.stdout)\(intact.stderr)")
        var broken = entries
        var hash = try #require(Hex.decode(broken[1].entryHash))
        hash[0] ^= 1
        broken[1].entryHash = Hex.encode(hash)
        let refused = try Tools.run([verifier, "ledger", try write(broken, "broken.jsonl"), "--keys", keysPEM.path])
        #expect(refused.status == 1, "\(refused.stdout)\(refused.stderr)")
    }
}
