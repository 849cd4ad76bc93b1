import Dispatch
import StepSignCrypto

/// The checks of SPEC §5.3 over a ledger, one entry at a time: `admin.auditVerify` in the
/// daemon and `stepsign-verify ledger` run this same code.
///
/// Give it every checkpoint first (``addCheckpoint(_:)``, ``requireCheckpoint(_:)``: they are
/// few), then the entries in the order read (``add(_:)``, which answers false once walking
/// on is pointless), then call ``finish()``. Memory is one entry plus a set of signature IDs
/// (16 bytes each) and the checkpoints, never the ledger.
///
/// With trusted keys it checks: the chain; every JWS (ES256, low-S, no duplicate members);
/// that each signature ID appears once and is the JWS's `jti`; that the row's columns (user,
/// kid, iat, peer) are the ones signed; that each checkpoint is signed and that the chain at
/// its `seq` has its entry hash; that no more than `checkpointEntries` entries follow one
/// another without a checkpoint; and that the ledger reaches a required checkpoint. C2SP
/// checkpoints of the log (SPEC §5.5, ``addLogCheckpoint(_:)``) are checked the same way: the
/// note is signed by a trusted key under its origin (a trusted P-256 key's type 0x02 line, or a
/// given log key), one origin per log epoch, and the Merkle root of the first `size`
/// entries, computed from their JWS bytes as they pass, is the note's. Entries of
/// revoked keys are counted and reported, not hidden. Without keys it checks the chain only.
///
/// Entries whose claims have no `peer` were made before checkpoints existed (see
/// docs/decisions.md): a run of them at the start of the ledger is accepted without
/// checkpoints, their peer columns, never signed, are counted as unverifiable, and their
/// signatures may be high-S (made before the daemon normalised s).
public struct LedgerVerifier {
    /// What the verifier checks against.
    public struct Options: Sendable {
        /// The published keys; nil checks the chain only.
        public var trustedKeys: TrustedKeys?
        /// Keys withdrawn by `admin.revokeKey`: their entries are reported.
        public var revokedKids: Set<String>
        /// The longest run of entries without a checkpoint; nil does not check it.
        public var checkpointEntries: Int?
        /// Keys the store lists that the daemon does not trust (SPEC §5.4), with the reason:
        /// an entry or checkpoint they sign is reported by name.
        public var untrustedKids: [String: String]
        /// Keys revoked at a known log index (SPEC §5.4: the JWKS member
        /// `stepsign_revoked_at`, the daemon's records): their entries below it are valid,
        /// those at or above it bad. Revocation events met on the walk add to these.
        public var revokedAt: [String: Int64]
        /// Log keys (SPEC §5.5) trusted to sign C2SP checkpoints besides the trusted P-256
        /// keys (whose type 0x02 lines count under any origin).
        public var logKeys: [NoteVerifierKey]

        public init(trustedKeys: TrustedKeys?, revokedKids: Set<String> = [], checkpointEntries: Int? = nil,
                    untrustedKids: [String: String] = [:], revokedAt: [String: Int64]? = nil,
                    logKeys: [NoteVerifierKey] = []) {
            self.logKeys = logKeys
            self.trustedKeys = trustedKeys
            self.revokedKids = revokedKids
            self.checkpointEntries = checkpointEntries
            self.untrustedKids = untrustedKids
            self.revokedAt = revokedAt ?? trustedKeys?.revokedAt ?? [:]
        }
    }

    private let options: Options
    private var expectedSeq: Int64 = 1
    private var previous = LedgerChain.genesisHash
    private var entries = 0
    /// Signature IDs seen so far.
    private var ids = Set<SignatureIDKey>()
    private var problems: [(seq: Int64?, text: String)] = []
    private var stopped = false
    /// Entry hashes that valid checkpoints (and the required one) claim, by seq.
    private var claimed: [Int64: [[UInt8]]] = [:]
    private var validCheckpoints = 0
    private var highestCheckpoint: Int64 = -1
    private var required: LedgerCheckpoint?
    /// Roots that valid C2SP checkpoints (and a required one) claim, by tree size.
    private var claimedRoots: [Int64: [[UInt8]]] = [:]
    /// The size and origin of each valid C2SP checkpoint, checked at the end.
    private var checkpointOrigins: [(size: Int64, origin: String)] = []
    /// The log epochs the walk met (SPEC §5.5): the index of each `logEpochStarted` event, the
    /// origin it starts and the one it says it follows.
    private var epochs: [(index: Int64, origin: String, previous: String)] = []
    private var requiredSize: Int64?
    /// The Merkle tree of the entries read so far (their leaves' right edge).
    private var tree = MerkleFrontier()
    /// The last seq a checkpoint (or the legacy run at the start) covers.
    private var covered: Int64 = 0
    private var sawPeerClaim = false
    private var revoked: (first: Int64, count: Int)?
    /// The log index each key was revoked at: from the options, and from the revocation
    /// events met on the walk (SPEC §5.4).
    private var revokedAt: [String: Int64]
    /// Entries that are events (SPEC §5.4), not signatures.
    public private(set) var events = 0
    /// Entries whose JWS has no `peer` claim: their peer columns are not signed.
    public private(set) var unsignedPeerEntries = 0

    public init(options: Options) {
        self.options = options
        self.revokedAt = options.revokedAt
    }

    /// Adds a stored or exported checkpoint; one that does not verify is a problem.
    public mutating func addCheckpoint(_ jws: String) {
        guard let keys = options.trustedKeys else { return }
        do {
            let (checkpoint, kid) = try LedgerCheckpoint.verify(jws, trustedKeys: keys)
            if let revokedAt = options.revokedAt[kid], checkpoint.seq > revokedAt {
                problems.append((nil, "a checkpoint of seq \(checkpoint.seq) is signed by key \(kid), revoked at log index \(revokedAt)"))
                return
            }
            validCheckpoints += 1
            claim(checkpoint)
        } catch .unknownKeyID(let kid) where options.revokedKids.contains(kid) {
            problems.append((nil, "a checkpoint is signed by revoked key \(kid)"))
        } catch .unknownKeyID(let kid) where options.untrustedKids[kid] != nil {
            problems.append((nil, "a checkpoint is signed by untrusted key \(kid) (\(options.untrustedKids[kid] ?? ""))"))
        } catch {
            problems.append((nil, "a checkpoint does not verify: \(error.description)"))
        }
    }

    /// Adds a checkpoint kept elsewhere (`--checkpoint FILE`): the ledger must reach it and
    /// hold its entry hash at its seq. Throws when it does not verify.
    public mutating func requireCheckpoint(_ jws: String) throws(SignatureVerificationError) {
        guard let keys = options.trustedKeys else { return }
        let (checkpoint, _) = try LedgerCheckpoint.verify(jws, trustedKeys: keys)
        required = checkpoint
        claim(checkpoint)
    }

    /// Adds a stored or exported C2SP checkpoint (a signed note, SPEC §5.5); one that does not
    /// verify, or names another origin than the log's at its size, is a problem (the log has one
    /// origin until a `logEpochStarted` event starts a new one: checkpoints of sizes up to the
    /// event's index carry the previous epoch's origin).
    public mutating func addLogCheckpoint(_ note: String) {
        guard options.trustedKeys != nil || !options.logKeys.isEmpty else { return }
        do throws(NoteError) {
            let checkpoint = try verifiedLogCheckpoint(note)
            // Its origin is checked at the end, against the epochs the walk meets.
            checkpointOrigins.append((checkpoint.size, checkpoint.origin))
            validCheckpoints += 1
            claimRoot(checkpoint)
        } catch {
            problems.append((nil, "a log checkpoint does not verify: \(error.description)"))
        }
    }

    /// Adds a C2SP checkpoint kept elsewhere: the log must reach its size and have its root.
    public mutating func requireLogCheckpoint(_ note: String) throws(NoteError) {
        let checkpoint = try verifiedLogCheckpoint(note)
        requiredSize = checkpoint.size
        claimRoot(checkpoint)
    }

    /// The body of `note` once a trusted key has signed it under its origin: a log key, or a
    /// trusted P-256 key not revoked at or below the tree size it signs.
    private func verifiedLogCheckpoint(_ note: String) throws(NoteError) -> LogCheckpoint {
        let signed = try SignedNote(parsing: note)
        let checkpoint = try LogCheckpoint(text: signed.text)
        var keys = options.logKeys.filter { $0.name == checkpoint.origin && $0.type != .cosignatureV1 }
        var kids: [UInt32: String] = [:]
        for key in options.trustedKeys?.all ?? [] {
            guard let verifier = try? NoteVerifierKey(name: checkpoint.origin, p256: key) else { continue }
            keys.append(verifier)
            kids[verifier.keyID] = key.thumbprint
        }
        let verified = try signed.verifiedKeys(keys)
        // SPEC §5.4: a key revoked at R signs nothing valid of a log longer than R; a note
        // with a valid line of another key still counts.
        let valid = verified.filter { key in
            guard key.type == .ecdsa, let kid = kids[key.keyID], let revokedAt = options.revokedAt[kid] else { return true }
            return checkpoint.size <= revokedAt
        }
        guard !valid.isEmpty else {
            throw .notVerified("the checkpoint of size \(checkpoint.size) is signed only by a key revoked below that size")
        }
        return checkpoint
    }

    private mutating func claimRoot(_ checkpoint: LogCheckpoint) {
        claimedRoots[checkpoint.size, default: []].append(checkpoint.rootHash)
        highestCheckpoint = max(highestCheckpoint, checkpoint.size)
        if checkpoint.size == 0, checkpoint.rootHash != MerkleHash.emptyRoot {
            problems.append((0, "the checkpoint of size 0 does not hold the empty tree's root"))
        }
    }

    private mutating func claim(_ checkpoint: LedgerCheckpoint) {
        guard let hash = checkpoint.entryHashBytes else { return }
        claimed[checkpoint.seq, default: []].append(hash)
        highestCheckpoint = max(highestCheckpoint, checkpoint.seq)
        if checkpoint.seq == 0, hash != LedgerChain.genesisHash {
            problems.append((0, "the checkpoint at seq 0 does not hold the genesis hash"))
        }
    }

    /// Checks the next entry. Returns false once a problem makes further entries meaningless
    /// (the chain, a signature, a duplicate ID, a column or a checkpoint mismatch).
    @discardableResult
    public mutating func add(_ link: LedgerLink) -> Bool {
        add(link, verified: options.trustedKeys.map { Self.verifySignature(link, keys: $0) })
    }

    /// Checks the next entries, in order, verifying their signatures on every core first (the
    /// ECDSA verifications are most of the work); the same outcome as ``add(_:)`` one by one.
    @discardableResult
    public mutating func add(contentsOf links: [LedgerLink]) -> Bool {
        guard let keys = options.trustedKeys, links.count > 1 else {
            for link in links where !add(link) { return false }
            return !stopped
        }
        var verified = [Verification?](repeating: nil, count: links.count)
        verified.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let results = buffer
            let chunks = min(links.count, 64)
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                var index = chunk
                while index < links.count {
                    results[index] = Self.verifySignature(links[index], keys: keys)
                    index += chunks
                }
            }
        }
        for (link, result) in zip(links, verified) where !add(link, verified: result) { return false }
        return true
    }

    typealias Verification = Result<VerifiedLogEntry, SignatureVerificationError>

    static func verifySignature(_ link: LedgerLink, keys: TrustedKeys) -> Verification {
        VerifiedLogEntry.verify(link.payloadSignature, keys: keys)
    }

    private mutating func add(_ link: LedgerLink, verified: Verification?) -> Bool {
        guard !stopped else { return false }
        entries += 1
        let seq = expectedSeq
        guard link.seq == seq, link.prevHash == previous,
              link.entryHash == LedgerChain.entryHash(previous: previous, jws: link.payloadSignature)
        else {
            return stop(seq, "the hash chain breaks (changed, removed, inserted or reordered entry)")
        }
        guard ids.insert(SignatureIDKey(link.signatureID)).inserted else {
            return stop(seq, "signature ID \(link.signatureID) appears twice")
        }
        if let verified {
            guard checkEntry(link, verified: verified) else { return false }
        }
        if let hashes = claimed[seq], hashes.contains(where: { $0 != link.entryHash }) {
            return stop(seq, "a checkpoint signs another entry hash at seq \(seq) (entry changed or re-chained)")
        }
        if claimed[seq] != nil { covered = seq }
        _ = tree.append(leafHash: MerkleHash.leaf(link.payloadSignature.utf8))
        if let roots = claimedRoots[seq] {
            guard roots.allSatisfy({ $0 == tree.root }) else {
                return stop(seq, "a log checkpoint of size \(seq) has another Merkle root (an entry changed, removed, inserted or reordered)")
            }
            covered = seq
        }
        if let limit = options.checkpointEntries, options.trustedKeys != nil, seq - covered > Int64(limit) {
            return stop(seq, "more than \(limit) entries without a checkpoint after seq \(covered) (checkpoints removed?)")
        }
        previous = link.entryHash
        expectedSeq += 1
        return true
    }

    /// The signature and column checks of one entry; false when it stopped the walk.
    private mutating func checkEntry(_ link: LedgerLink, verified: Verification) -> Bool {
        let seq = link.seq
        let claims: VerifiedLogEntry
        switch verified {
        case let .success(result):
            claims = result
        case let .failure(.unknownKeyID(kid)) where options.revokedKids.contains(kid):
            revoked = (revoked?.first ?? seq, (revoked?.count ?? 0) + 1)
            return true
        case let .failure(.unknownKeyID(kid)) where options.untrustedKids[kid] != nil:
            return stop(seq, "signed by key \(kid), which is not trusted (\(options.untrustedKids[kid] ?? ""))")
        case let .failure(error):
            return stop(seq, "signature: \(error.description)")
        }
        guard claims.jti == link.signatureID else { return stop(seq, "signatureID differs from the JWS jti") }
        if let user = link.user, Array(user.utf8) != Array(claims.user.utf8) {
            return stop(seq, "the user column differs from the JWS \(claims.event == nil ? "sub" : "user")")
        }
        if let iat = link.iat, iat != claims.iat { return stop(seq, "the iat column differs from the JWS iat") }
        if let kid = link.kid, kid != claims.kid {
            return stop(seq, "the kid column differs from the JWS kid")
        }
        // SPEC §5.4: a key revoked at log index R signs nothing valid from R on.
        let index = seq - 1
        if let revokedAt = revokedAt[claims.kid], index >= revokedAt {
            return stop(seq, "signed by key \(claims.kid) after its revocation at log index \(revokedAt)")
        }
        if let event = claims.event {
            events += 1
            if event.kind == .signingKeyRevoked, let kid = event.detail("kid") {
                revokedAt[kid] = min(revokedAt[kid] ?? index, index)
            }
            if event.kind == .logEpochStarted {
                guard let origin = event.detail("origin"), let previous = event.detail("previousOrigin") else {
                    return stop(seq, "a logEpochStarted event names no origin or previous origin")
                }
                epochs.append((index, origin, previous))
            }
        }
        if let signed = claims.peer {
            sawPeerClaim = true
            if let peer = link.peer, peer != signed { return stop(seq, "the peer columns differ from the JWS peer claim") }
        } else {
            unsignedPeerEntries += 1
            // A run of entries from before checkpoints and peer claims, at the start only.
            if !sawPeerClaim, covered == seq - 1 { covered = seq }
        }
        return true
    }

    private mutating func stop(_ seq: Int64, _ text: String) -> Bool {
        problems.append((seq, text))
        stopped = true
        return false
    }

    /// Whether every checkpoint names its epoch's origin and each epoch follows the one before
    /// (SPEC §5.5): the first origin is the one the first epoch says it follows, or, with no
    /// epoch, the smallest checkpoint's; a checkpoint of size n belongs to the last epoch whose
    /// event's index is below n.
    private func originProblem() -> String? {
        guard let first = epochs.first?.previous ?? checkpointOrigins.min(by: { $0.size < $1.size })?.origin else { return nil }
        var previous = first
        for epoch in epochs {
            guard epoch.previous == previous else {
                return "the log epoch started at index \(epoch.index) says it follows \"\(epoch.previous)\", but the log's origin there is \"\(previous)\""
            }
            guard epoch.origin != previous, !epochs.contains(where: { $0.index < epoch.index && $0.origin == epoch.origin }) else {
                return "the log epoch started at index \(epoch.index) reuses the origin \"\(epoch.origin)\""
            }
            previous = epoch.origin
        }
        for (size, origin) in checkpointOrigins {
            let expected = epochs.last { $0.index < size }?.origin ?? first
            if origin != expected {
                return "a checkpoint of size \(size) names the origin \"\(origin)\", the log's at that size is \"\(expected)\""
            }
        }
        return nil
    }

    /// The outcome: `admin.auditVerify`'s result.
    public func finish() -> LedgerAudit {
        var problems = self.problems
        let head = expectedSeq - 1
        if !stopped {
            if let required, required.seq > head {
                problems.append((head + 1, "the ledger ends at seq \(head), before the checkpoint given (seq \(required.seq)): truncated or rolled back"))
            } else if let requiredSize, requiredSize > head {
                problems.append((head + 1, "the log has \(head) entries, fewer than the \(requiredSize) of the checkpoint given: truncated or rolled back"))
            } else if highestCheckpoint > head {
                problems.append((head + 1, "a checkpoint signs seq \(highestCheckpoint) but the ledger ends at \(head) (entries removed or rolled back)"))
            }
            if let revoked {
                problems.append((revoked.first, "\(revoked.count) entries are signed by a revoked key, the first at seq \(revoked.first)"))
            }
            if let problem = originProblem() { problems.append((nil, problem)) }
        }
        // The problem at the lowest seq; ones without a seq (a bad checkpoint) after those.
        let first = problems.min { ($0.seq ?? .max) < ($1.seq ?? .max) }
        return LedgerAudit(ok: first == nil, entries: entries, firstBadSeq: first?.seq, checkpoints: validCheckpoints,
                           problem: first?.text, events: events)
    }
}
