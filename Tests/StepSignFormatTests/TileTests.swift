import StepSignCrypto
import StepSignFormat
import Testing

/// C2SP tlog-tiles as the specification words it: paths, which tiles a tree of a size has (its
/// own examples), entry bundles, and a tree read back from tiles giving the same roots and
/// proofs as the tree itself.
@Suite struct TileTests {
    @Test func pathsAreTheSpecifications() {
        #expect(Tile(level: 0, index: 1_234_067, width: 256).path == "tile/0/x001/x234/067")
        #expect(Tile(level: 2, index: 0, width: 17).path == "tile/2/000.p/17")
        #expect(Tile(level: 0, index: 1067, width: 9, isEntryBundle: true).path == "tile/entries/x001/067.p/9")
        #expect(Tile(level: 63, index: 999, width: 255).path == "tile/63/999.p/255")
        #expect(Tile(level: 1, index: 1000, width: 256).path == "tile/1/x001/000")
        for tile in [Tile(level: 0, index: 1_234_067, width: 256), Tile(level: 5, index: 7, width: 3),
                     Tile(level: 0, index: 123_456_789_012, width: 1, isEntryBundle: true)] {
            #expect(Tile(path: tile.path) == tile)
        }
    }

    @Test(arguments: ["tile/0/1234067", "tile/0/x1/234", "tile/0/001/234", "tile/0/x000/001", "tile/00/000",
                      "tile/64/000", "tile/0/000.p/256", "tile/0/000.p/0", "tile/0/000.p/07", "tile/-1/000",
                      "tile/entries/000.p", "tiles/0/000", "tile/0/", "tile/0/x001/x002"])
    func otherSpellingsAreNotTiles(_ path: String) {
        #expect(Tile(path: path) == nil)
    }

    @Test func aTreeOf70000HasTheSpecificationsTiles() {
        let tiles = Tile.tiles(size: 70_000).filter { !$0.isEntryBundle }
        #expect(tiles.filter { $0.level == 0 && $0.width == 256 }.count == 273)
        #expect(tiles.filter { $0.level == 0 && $0.width < 256 }.map(\.width) == [112])
        #expect(tiles.filter { $0.level == 1 }.map(\.width) == [256, 17])
        #expect(tiles.filter { $0.level == 2 }.map(\.width) == [1])
        #expect(tiles.count == 277)
        #expect(Tile.tiles(size: 70_000).filter(\.isEntryBundle).count == 274)
        // "A tree of size 256 will be represented by a full level 0 tile and a partial level 1
        // tile of width 1."
        #expect(Tile.tiles(size: 256).filter { !$0.isEntryBundle } == [Tile(level: 0, index: 0, width: 256),
                                                                        Tile(level: 1, index: 0, width: 1)])
        #expect(Tile.tiles(size: 0).isEmpty)
    }

    @Test func aGrowingTreeWritesOnlyTheTilesItGained() {
        #expect(Tile.tiles(size: 300, publishedSize: 300).isEmpty)
        let grown = Tile.tiles(size: 513, publishedSize: 300).filter { !$0.isEntryBundle }
        #expect(grown == [Tile(level: 0, index: 1, width: 256), Tile(level: 0, index: 2, width: 1),
                          Tile(level: 1, index: 0, width: 2)])
        // Every tile of the larger tree is either gained or already in the smaller one's set.
        for (old, new) in [(0, 1), (1, 255), (255, 256), (256, 65_536), (65_535, 70_000)] as [(Int64, Int64)] {
            let gained = Set(Tile.tiles(size: new, publishedSize: old))
            let had = Set(Tile.tiles(size: old))
            #expect(Set(Tile.tiles(size: new)).isSubset(of: gained.union(had)), "\(old) → \(new)")
        }
    }

    @Test func entryBundlesAreLengthPrefixedAndReadStrictly() throws {
        let entries: [[UInt8]] = [[], Array("a.b.c".utf8), [UInt8](repeating: 7, count: 300)]
        let bundle = try #require(EntryBundle.encode(entries))
        #expect(Array(bundle.prefix(9)) == [0, 0, 0, 5] + Array("a.b.c".utf8))
        #expect(try EntryBundle.decode(bundle, count: 3) == entries)
        #expect(throws: TileError.self) { try EntryBundle.decode(bundle, count: 2) }
        #expect(throws: TileError.self) { try EntryBundle.decode(bundle, count: 4) }
        #expect(throws: TileError.self) { try EntryBundle.decode(Array(bundle.dropLast()), count: 3) }
        #expect(EntryBundle.encode([[UInt8](repeating: 0, count: 65_536)]) == nil)
    }

    @Test(arguments: [1, 2, 255, 256, 257, 511, 600, 65_536 + 300] as [Int64])
    func aTreeReadFromTilesHasTheTreesRootAndProofs(size: Int64) async throws {
        let leaves = (0..<size).map { MerkleHash.leaf(Array("entry \($0)".utf8)) }
        var frontier = MerkleFrontier()
        var nodes: [MerkleNode: [UInt8]] = [:]
        for leaf in leaves {
            for (node, hash) in frontier.append(leafHash: leaf) { nodes[node] = hash }
        }
        var files: [String: [UInt8]] = [:]
        for tile in Tile.tiles(size: size) where !tile.isEntryBundle {
            files[tile.path] = tile.nodes.flatMap { nodes[$0]! }
        }
        let published = files
        var tree = TiledTree(size: size) { tile in
            guard let bytes = published[tile.path] else { throw TileError.missing(tile.path) }
            return bytes
        }
        let root = try await tree.root()
        #expect(root == frontier.root)
        for index in [0, size / 3, size - 1] {
            let proof = try await tree.hashes(MerkleTree.inclusionPlan(index: index, size: size))
            #expect(MerkleProof.verifyInclusion(leafHash: leaves[Int(index)], index: index, size: size, proof: proof, root: root))
        }
        let old = size / 2
        if old > 0 {
            var oldFrontier = MerkleFrontier()
            for leaf in leaves.prefix(Int(old)) { _ = oldFrontier.append(leafHash: leaf) }
            let proof = try await tree.hashes(MerkleTree.consistencyPlan(from: old, to: size))
            #expect(MerkleProof.verifyConsistency(oldSize: old, newSize: size, oldRoot: oldFrontier.root, newRoot: root, proof: proof))
        }
    }
}
