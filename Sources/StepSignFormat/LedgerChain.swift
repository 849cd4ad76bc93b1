import StepSignCrypto

/// The ledger's hash chain (SPEC §5).
///
/// `entryHash = SHA-256(previousHash || SHA-256(JWS))`; the first entry's previous hash is 32
/// zero bytes; sequence numbers start at 1 with no gaps.
public enum LedgerChain {
    /// The previous hash of the first entry: 32 zero bytes.
    public static let genesisHash = [UInt8](repeating: 0, count: 32)

    /// The entry hash of an entry holding `jws` that follows an entry whose hash is `previous`.
    public static func entryHash(previous: [UInt8], jws: String) -> [UInt8] {
        entryHash(previous: previous, jwsDigest: jwsDigest(jws))
    }

    /// The entry hash from the JWS's digest (``jwsDigest(_:)``), computed ahead of time.
    public static func entryHash(previous: [UInt8], jwsDigest: [UInt8]) -> [UInt8] {
        SHA256.hash(previous, jwsDigest)
    }

    /// SHA-256 of the JWS's UTF-8 bytes: the inner hash of an entry hash.
    public static func jwsDigest(_ jws: String) -> [UInt8] {
        SHA256.hash(jws.utf8)
    }

    /// Walks `links` in the order given and reports the first place the chain breaks.
    ///
    /// A changed JWS or hash, a removed, inserted or reordered entry each break it: the
    /// sequence number, the previous hash or the recomputed entry hash stops matching.
    public static func audit(_ links: some Sequence<LedgerLink>) -> LedgerAudit {
        var expectedSeq: Int64 = 1
        var previous = genesisHash
        var count = 0
        for link in links {
            count += 1
            guard link.seq == expectedSeq,
                  link.prevHash == previous,
                  link.entryHash == entryHash(previous: previous, jws: link.payloadSignature)
            else {
                return LedgerAudit(ok: false, entries: count, firstBadSeq: expectedSeq,
                                   problem: "the hash chain breaks (changed, removed, inserted or reordered entry)")
            }
            previous = link.entryHash
            expectedSeq += 1
        }
        return LedgerAudit(ok: true, entries: count, firstBadSeq: nil)
    }
}

/// One ledger entry as far as the chain is concerned.
public struct LedgerLink: Sendable, Equatable {
    public var seq: Int64
    public var signatureID: String
    public var payloadSignature: String
    public var prevHash: [UInt8]
    public var entryHash: [UInt8]
    /// The row's user column, when the source has it (checked against the JWS `sub`).
    public var user: String?
    /// The row's kid column, when the source has it (checked against the JWS header).
    public var kid: String?
    /// The row's iat column, when the source has it (checked against the JWS `iat`).
    public var iat: Int64?
    /// The row's peer columns, when the source has them (checked against the `peer` claim).
    public var peer: SignaturePeer?

    public init(seq: Int64, signatureID: String, payloadSignature: String, prevHash: [UInt8], entryHash: [UInt8],
                user: String? = nil, kid: String? = nil, iat: Int64? = nil, peer: SignaturePeer? = nil) {
        self.seq = seq
        self.signatureID = signatureID
        self.payloadSignature = payloadSignature
        self.prevHash = prevHash
        self.entryHash = entryHash
        self.user = user
        self.kid = kid
        self.iat = iat
        self.peer = peer
    }
}

/// The outcome of checking a ledger: `admin.auditVerify`'s `result`.
public struct LedgerAudit: Sendable, Equatable, Codable {
    /// True when every check passed.
    public var ok: Bool
    /// How many entries were read (up to and including the first bad one).
    public var entries: Int
    /// The sequence number at which the chain first breaks, or nil.
    public var firstBadSeq: Int64?
    /// How many stored checkpoints verified.
    public var checkpoints: Int
    /// What is wrong, in one line, or nil.
    public var problem: String?
    /// How many of the entries read are events (SPEC §5.4), not signatures (0 when the
    /// signatures were not read).
    public var events: Int

    public init(ok: Bool, entries: Int, firstBadSeq: Int64?, checkpoints: Int = 0, problem: String? = nil, events: Int = 0) {
        self.ok = ok
        self.entries = entries
        self.firstBadSeq = firstBadSeq
        self.checkpoints = checkpoints
        self.problem = problem
        self.events = events
    }
}
