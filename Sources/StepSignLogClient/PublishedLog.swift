import StepSignFormat

/// A log published as C2SP tlog-tiles (SPEC §5.6), read through a ``TileSource``: its signed
/// checkpoint, its entry bundles, and its tree (``TiledTree``).
public struct PublishedLog: Sendable {
    /// The largest `checkpoint` read.
    public static let maxCheckpointSize = SignedNote.maxSize
    /// The largest entry bundle: 256 entries of at most 65,535 bytes and their lengths.
    public static let maxBundleSize = Tile.width * (2 + EntryBundle.maxEntrySize)

    public let source: any TileSource

    public init(source: any TileSource) {
        self.source = source
    }

    /// The published checkpoint, verified with `keys` (a key counts only for the origin it is
    /// named after, and at least one must verify).
    public func checkpoint(trusting keys: [NoteVerifierKey]) async throws -> (note: SignedNote, checkpoint: LogCheckpoint) {
        guard let bytes = try await source.read("checkpoint", limit: Self.maxCheckpointSize) else {
            throw TileError.missing("\(source.location) has no checkpoint")
        }
        let note = try SignedNote(parsing: String(decoding: bytes, as: UTF8.self))
        let checkpoint = try LogCheckpoint(text: note.text)
        _ = try note.verifiedKeys(keys.filter { $0.name == checkpoint.origin })
        return (note, checkpoint)
    }

    /// The entries of `bundle` (exactly its width of them).
    public func entries(_ bundle: Tile) async throws -> [[UInt8]] {
        precondition(bundle.isEntryBundle)
        guard let bytes = try await source.read(bundle.path, limit: Self.maxBundleSize) else {
            throw TileError.missing("\(source.location)/\(bundle.path)")
        }
        return try EntryBundle.decode(bytes, count: bundle.width)
    }

    /// The tree of `size` leaves, its hashes read from the hash tiles.
    public func tree(size: Int64) -> TiledTree {
        let source = self.source
        return TiledTree(size: size) { tile in
            guard let bytes = try await source.read(tile.path, limit: Tile.width * MerkleHash.size) else {
                throw TileError.missing("\(source.location)/\(tile.path)")
            }
            return bytes
        }
    }
}
