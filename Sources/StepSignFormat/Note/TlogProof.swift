import StepSignCrypto

/// A C2SP tlog-proof (`c2sp.org/tlog-proof@v1`): the proof, checkable offline, that an entry
/// is in a transparency log: its index, the RFC 9162 inclusion path from its leaf to the root
/// of a checkpointed tree, and the checkpoint itself, verbatim, with its signatures and
/// cosignatures (SPEC §5.5).
///
///     c2sp.org/tlog-proof@v1
///     index 41
///     gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=
///     B95lDa8R83lS8n0eG+o0buTxRKQTYFi//1U8anccXmA=
///
///     stepsign.host.example/signer-1
///     1042
///     qT7Y4V8v5c0H2pM0N6b1Z0Jb3l9rQ2xq8U9vX1w2y3Q=
///
///     — stepsign.host.example/signer-1 Az3grlgt…
///
/// The optional `extra` line is read and written, never trusted (the specification's rule).
public struct TlogProof: Sendable, Equatable {
    /// The first line of every proof.
    public static let header = "c2sp.org/tlog-proof@v1"
    /// The longest path of a tree of fewer than 2^63 leaves.
    public static let maxHashes = 63
    /// The largest proof file read: the largest note, its path and its lines.
    public static let maxSize = SignedNote.maxSize + 8 * 1024

    /// Opaque, unauthenticated data (the `extra` line), or nil.
    public var extra: [UInt8]?
    /// The entry's zero-based index in the log (its ledger seq − 1).
    public var index: Int64
    /// The inclusion path, from the leaf's sibling up to a child of the root.
    public var hashes: [[UInt8]]
    /// The signed checkpoint of the tree the path leads to.
    public var checkpoint: SignedNote

    public init(index: Int64, hashes: [[UInt8]], checkpoint: SignedNote, extra: [UInt8]? = nil) throws(NoteError) {
        guard index >= 0 else { throw .malformed("an index is not negative") }
        guard hashes.count <= Self.maxHashes, hashes.allSatisfy({ $0.count == MerkleHash.size }) else {
            throw .malformed("a path is at most \(Self.maxHashes) hashes of 32 bytes")
        }
        self.index = index
        self.hashes = hashes
        self.checkpoint = checkpoint
        self.extra = extra
    }

    /// Reads a proof file; every line is checked, nothing is skipped.
    public init(parsing text: String) throws(NoteError) {
        guard text.utf8.count <= Self.maxSize else { throw .malformed("the proof is larger than \(Self.maxSize) bytes") }
        guard let blank = text.range(of: "\n\n") else { throw .malformed("no blank line before the checkpoint") }
        var lines = text[..<blank.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)[...]
        guard lines.popFirst() == Substring(Self.header) else {
            throw .malformed("the first line is not \(Self.header)")
        }
        var extra: [UInt8]?
        if let line = lines.first, line.hasPrefix("extra ") {
            guard let data = Base64.decode(line.dropFirst(6)) else { throw .malformed("the extra line is not base64") }
            extra = data
            lines.removeFirst()
        }
        guard let indexLine = lines.popFirst(), indexLine.hasPrefix("index ") else {
            throw .malformed("no index line")
        }
        let digits = indexLine.dropFirst(6)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              digits == "0" || !digits.hasPrefix("0"), let index = Int64(digits)
        else { throw .malformed("the index is not a decimal number without leading zeroes") }
        guard lines.count <= Self.maxHashes else { throw .malformed("more than \(Self.maxHashes) hashes") }
        var hashes: [[UInt8]] = []
        for line in lines {
            guard let hash = Base64.decode(line), hash.count == MerkleHash.size else {
                throw .malformed("a path line is not base64 of 32 bytes")
            }
            hashes.append(hash)
        }
        let note = try SignedNote(parsing: String(text[blank.upperBound...]))
        try self.init(index: index, hashes: hashes, checkpoint: note, extra: extra)
    }

    /// The proof file's text.
    public var serialized: String {
        var lines = [Self.header]
        if let extra { lines.append("extra " + Base64.encode(extra)) }
        lines.append("index \(index)")
        lines += hashes.map { Base64.encode($0) }
        return lines.map { $0 + "\n" }.joined() + "\n" + checkpoint.serialized
    }

    /// Checks the proof for the entry whose leaf data is `leaf` (for stepsign, the JWS bytes),
    /// by the specification's steps: the checkpoint is signed by one of `logKeys` named as its
    /// origin (a key of another origin does not count), at least `quorum` of `witnesses` cosigned
    /// it (SPEC §5.6), and the path leads from the leaf at `index` to the checkpoint's root.
    /// Returns the checkpoint.
    public func verify(leaf: some Collection<UInt8>, logKeys: [NoteVerifierKey], witnesses: [NoteVerifierKey] = [],
                       quorum: Int = 0) throws(NoteError) -> LogCheckpoint {
        let body = try LogCheckpoint(text: checkpoint.text)
        let originKeys = logKeys.filter { $0.name == body.origin && $0.type != .cosignatureV1 }
        guard !originKeys.isEmpty else {
            throw .notVerified("no log key is given for the origin \"\(body.origin)\"")
        }
        _ = try checkpoint.verifiedKeys(originKeys)
        if quorum > 0 {
            let cosigners = checkpoint.cosigners(witnesses)
            guard cosigners.count >= quorum else {
                throw .notVerified("\(cosigners.count) of the \(witnesses.count) witnesses given cosigned the checkpoint; the quorum is \(quorum)")
            }
        }
        guard index < body.size else {
            throw .notVerified("index \(index) is not below the checkpoint's tree size \(body.size)")
        }
        guard MerkleProof.verifyInclusion(leafHash: MerkleHash.leaf(leaf), index: index, size: body.size,
                                          proof: hashes, root: body.rootHash) else {
            throw .notVerified("the inclusion path does not lead from this entry at index \(index) to the checkpoint's root")
        }
        return body
    }
}
