import StepSignFormat

/// Checks a published log against a signed checkpoint (SPEC §5.6): every entry bundle hashes,
/// leaf by leaf, into a tree whose root is the checkpoint's, and every hash tile holds the
/// hashes of that tree, so the tiles a client builds proofs from are the tree the checkpoint
/// signs. From a ``MerkleFrontier`` of an earlier checkpoint (a monitor's), only what the log
/// gained since is read, and the new root is computed from the old tree's edge: consistency
/// with the earlier checkpoint is part of the check.
public enum PublishedLogAudit {
    /// What was checked.
    public struct Report: Sendable, Equatable {
        /// Entries read (those past the starting frontier).
        public var entries: Int64
        /// Hash tiles and entry bundles read.
        public var tiles: Int

        public init(entries: Int64 = 0, tiles: Int = 0) {
            self.entries = entries
            self.tiles = tiles
        }
    }

    /// Reads the entries of `log` from `frontier`'s size to `checkpoint`'s, calling `visit` with
    /// each entry's index and bytes in order, and checks the tree and its tiles. Returns the
    /// frontier of the checkpoint's tree (for the next run) and what was read; throws
    /// ``TileError/mismatch(_:)`` at the first thing that does not hash as the checkpoint says.
    public static func check(_ log: PublishedLog, checkpoint: LogCheckpoint, from frontier: MerkleFrontier = MerkleFrontier(),
                             visit: (Int64, [UInt8]) async throws -> Void = { _, _ in }) async throws -> (MerkleFrontier, Report) {
        let size = checkpoint.size
        let start = frontier.size
        guard start <= size else {
            throw TileError.mismatch("the checkpoint's size \(size) is below the \(start) already seen: the log shrank")
        }
        var frontier = frontier
        var tree = log.tree(size: size)
        var report = Report(entries: 0, tiles: 0)
        // Hashes of the subtrees that the new leaves complete at tile levels 1 and up, by level.
        var expected: [Int: [(Int64, [UInt8])]] = [:]
        let tiles = Tile.tiles(size: size, publishedSize: start)
        for bundle in tiles where bundle.isEntryBundle {
            let entries = try await log.entries(bundle)
            let published = try await tree.hashes(of: Tile(level: 0, index: bundle.index, width: bundle.width))
            report.tiles += 2
            for (offset, entry) in entries.enumerated() {
                let index = bundle.leaves.lowerBound + Int64(offset)
                guard index >= start else { continue }
                let leaf = MerkleHash.leaf(entry)
                guard published[offset] == leaf else {
                    throw TileError.mismatch("leaf \(index): the level-0 tile \(bundle.index) does not hold the hash of its entry")
                }
                try await visit(index, entry)
                for (node, hash) in frontier.append(leafHash: leaf) where node.level > 0 && node.level % 8 == 0 {
                    expected[node.level / 8, default: []].append((node.index, hash))
                }
                report.entries += 1
            }
        }
        guard frontier.root == checkpoint.rootHash else {
            throw TileError.mismatch("the entries from \(start) to \(size) do not hash to the checkpoint's root")
        }
        for tile in tiles where !tile.isEntryBundle && tile.level > 0 {
            _ = try await tree.hashes(of: tile)
            report.tiles += 1
        }
        for (level, hashes) in expected {
            for (position, hash) in hashes {
                guard let tile = Tile.hashTile(level: level, holding: position, size: size) else { continue }
                let published = try await tree.hashes(of: tile)
                guard published[Int(position - tile.index * Int64(Tile.width))] == hash else {
                    throw TileError.mismatch("\(tile.path) does not hold the tree's hash at position \(position)")
                }
            }
        }
        return (frontier, report)
    }
}
