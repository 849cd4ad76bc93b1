import StepSignCrypto

/// The body of a C2SP tlog-checkpoint: the log's origin, its tree size and root hash, and
/// optional extension lines; the text a checkpoint's ``SignedNote`` signs (SPEC §5.5).
///
///     stepsign.host.example/signer-1
///     1042
///     qT7Y4V8v5c0H2pM0N6b1Z0Jb3l9rQ2xq8U9vX1w2y3Q=
public struct LogCheckpoint: Sendable, Equatable {
    /// The log's name, unique per log (`ledger.origin`); the first line.
    public var origin: String
    /// The number of leaves (ledger entries).
    public var size: Int64
    /// The tree's root hash (RFC 9162), 32 bytes.
    public var rootHash: [UInt8]
    /// Lines after the root hash, each non-empty (none written here).
    public var extensions: [String]

    public init(origin: String, size: Int64, rootHash: [UInt8], extensions: [String] = []) throws(NoteError) {
        guard !origin.isEmpty, !origin.contains("\n") else { throw .malformed("the origin must be one non-empty line") }
        guard size >= 0 else { throw .malformed("a tree size is not negative") }
        guard rootHash.count == MerkleHash.size else { throw .malformed("a root hash is 32 bytes") }
        guard extensions.allSatisfy({ !$0.isEmpty && !$0.contains("\n") }) else {
            throw .malformed("an extension line must be non-empty")
        }
        self.origin = origin
        self.size = size
        self.rootHash = rootHash
        self.extensions = extensions
    }

    /// Reads a checkpoint body (a signed note's text).
    public init(text: String) throws(NoteError) {
        guard text.hasSuffix("\n") else { throw .malformed("a checkpoint ends in a newline") }
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count >= 3 else { throw .malformed("a checkpoint has an origin, a size and a root hash") }
        let sizeText = lines[1]
        guard !sizeText.isEmpty, sizeText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              sizeText == "0" || !sizeText.hasPrefix("0"), let size = Int64(sizeText)
        else { throw .malformed("the tree size is not a decimal number: \"\(sizeText)\"") }
        guard let root = Base64.decode(lines[2]), root.count == MerkleHash.size else {
            throw .malformed("the root hash is not base64 of 32 bytes")
        }
        try self.init(origin: lines[0], size: size, rootHash: root, extensions: Array(lines.dropFirst(3)))
    }

    /// The note text: origin, size, base64 root, extension lines, each ending in a newline.
    public var text: String {
        ([origin, String(size), Base64.encode(rootHash)] + extensions).map { $0 + "\n" }.joined()
    }
}
