/// The Merkle tree of a checkpoint read from published tiles (C2SP tlog-tiles): any complete
/// subtree's hash, and so any root or proof (``MerkleProofPlan``), from the few tiles that hold
/// it, fetched through `fetch` (files or HTTP) and kept once read.
///
/// The hashes are the publisher's; they prove nothing until a root or proof made of them is
/// checked against a signed checkpoint, which is what every caller does.
public struct TiledTree {
    /// The tree's size (the checkpoint's): which tiles are partial, and how wide.
    public let size: Int64
    private let fetch: (Tile) async throws -> [UInt8]
    private var cache: [Tile: [[UInt8]]] = [:]

    public init(size: Int64, fetch: @escaping (Tile) async throws -> [UInt8]) {
        self.size = size
        self.fetch = fetch
    }

    /// The hashes of `tile`, which must be exactly `width` hashes long.
    public mutating func hashes(of tile: Tile) async throws -> [[UInt8]] {
        if let hashes = cache[tile] { return hashes }
        let bytes = try await fetch(tile)
        guard bytes.count == tile.width * MerkleHash.size else {
            throw TileError.malformed("\(tile.path) is \(bytes.count) bytes, not \(tile.width) hashes")
        }
        let hashes = (0..<tile.width).map { Array(bytes[$0 * MerkleHash.size..<($0 + 1) * MerkleHash.size]) }
        cache[tile] = hashes
        return hashes
    }

    /// The hash of the complete subtree `node`, which must lie within the tree.
    public mutating func hash(of node: MerkleNode) async throws -> [UInt8] {
        guard node.level < 63, node.index >= 0, node.firstLeaf + node.width <= size else {
            throw TileError.missing("the subtree \(node) is not in a tree of \(size)")
        }
        let tileLevel = node.level / 8
        let below = node.level % 8
        let first = node.index << Int64(below)
        guard let tile = Tile.hashTile(level: tileLevel, holding: first, size: size) else {
            throw TileError.missing("no tile holds the subtree \(node)")
        }
        let offset = Int(first - tile.index * Int64(Tile.width))
        var layer = Array(try await hashes(of: tile)[offset..<offset + (1 << below)])
        while layer.count > 1 {
            layer = stride(from: 0, to: layer.count, by: 2).map { MerkleHash.node(layer[$0], layer[$0 + 1]) }
        }
        return layer[0]
    }

    /// The hashes a plan (a root, an inclusion or a consistency proof) is made of.
    public mutating func hashes(_ plan: MerkleProofPlan) async throws -> [[UInt8]] {
        var read: [MerkleNode: [UInt8]] = [:]
        for node in plan.nodes { read[node] = try await hash(of: node) }
        return try plan.hashes(read)
    }

    /// The tree's root.
    public mutating func root() async throws -> [UInt8] {
        try await hashes(MerkleTree.rootPlan(size: size)).first ?? MerkleHash.emptyRoot
    }
}
