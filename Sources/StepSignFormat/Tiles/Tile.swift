/// One resource of a C2SP tlog-tiles log (SPEC §5.6, "Published tiles"): a hash tile or an
/// entry bundle, with its place in the tree and its path under the log's prefix.
///
/// A hash tile at level `L` holds up to 256 consecutive hashes of complete subtrees of `256^L`
/// leaves (level 0: the leaf hashes); an entry bundle holds the entries of one level-0 tile. A
/// tile of fewer than 256 (a *partial* tile, the right edge of a tree) is named with its width:
///
///     tile/0/x001/x234/067        tile 1234067 of level 0, full
///     tile/2/000.p/17             the first level-2 tile, 17 hashes wide
///     tile/entries/x001/067.p/9   the entries of level-0 tile 1067, 9 of them
public struct Tile: Sendable, Hashable, CustomStringConvertible {
    /// The hashes (or entries) a full tile holds.
    public static let width = 256
    /// Levels are 0…63 (C2SP).
    public static let maxLevel = 63

    /// The tile's level (ignored for entry bundles, which follow level 0).
    public var level: Int
    /// The tile's index within its level.
    public var index: Int64
    /// How many hashes or entries it holds: 256 for a full tile, 1…255 for a partial one.
    public var width: Int
    /// An entry bundle rather than a hash tile.
    public var isEntryBundle: Bool

    public init(level: Int, index: Int64, width: Int, isEntryBundle: Bool = false) {
        precondition((0...Self.maxLevel).contains(level) && index >= 0 && (1...Self.width).contains(width))
        self.level = isEntryBundle ? 0 : level
        self.index = index
        self.width = width
        self.isEntryBundle = isEntryBundle
    }

    /// The path under the log's prefix (`tile/<L>/<N>[.p/<W>]` or `tile/entries/<N>[.p/<W>]`).
    public var path: String {
        var path = "tile/" + (isEntryBundle ? "entries" : String(level)) + "/" + Self.encode(index)
        if width < Self.width { path += ".p/" + String(width) }
        return path
    }

    public var description: String { path }

    /// The hashes the tile holds, as the subtrees of the tree they are: at level `L`, the
    /// `width` subtrees of `256^L` leaves from the tile's first.
    public var nodes: [MerkleNode] {
        (0..<Int64(width)).map { MerkleNode(level: 8 * level, index: index * Int64(Self.width) + $0) }
    }

    /// The leaves an entry bundle (or a level-0 tile) holds.
    public var leaves: Range<Int64> {
        let first = index * Int64(Self.width)
        return first..<first + Int64(width)
    }

    /// Reads a path made by ``path``, strictly (the only spelling of each tile).
    public init?(path: String) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3, parts[0] == "tile" else { return nil }
        var rest = Array(parts.dropFirst(2))
        var width = Self.width
        if rest.count >= 2, rest[rest.count - 1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
           rest[rest.count - 2].hasSuffix(".p") {
            guard let w = Int(rest.removeLast()), (1..<Self.width).contains(w), String(w) == parts.last else { return nil }
            width = w
            rest[rest.count - 1] = String(rest[rest.count - 1].dropLast(2))
        }
        guard let index = Self.decode(rest) else { return nil }
        if parts[1] == "entries" {
            self.init(level: 0, index: index, width: width, isEntryBundle: true)
        } else {
            guard let level = Int(parts[1]), (0...Self.maxLevel).contains(level), String(level) == parts[1] else { return nil }
            self.init(level: level, index: index, width: width)
        }
    }

    /// The tiles a tree of `size` leaves is published as, at every level: full tiles and, at each
    /// level with a remainder, one partial tile (C2SP: "floor(s / 256^l) mod 256" wide), with the
    /// entry bundles of level 0. With `publishedSize`, only those that a tree of that size did
    /// not already have (the tiles to write when the log grows from it).
    public static func tiles(size: Int64, publishedSize: Int64 = 0) -> [Tile] {
        precondition(size >= 0 && publishedSize >= 0)
        var tiles: [Tile] = []
        var level = 0
        while level <= maxLevel {
            let shift = Int64(8 * level)
            guard shift < 63 else { break }
            let count = size >> shift
            guard count > 0 else { break }
            let published = publishedSize >> shift
            if count > published {
                let first = published / Int64(width)
                let last = (count - 1) / Int64(width)
                for index in first...last {
                    let tileWidth = Int(min(Int64(width), count - index * Int64(width)))
                    tiles.append(Tile(level: level, index: index, width: tileWidth))
                    if level == 0 { tiles.append(Tile(level: 0, index: index, width: tileWidth, isEntryBundle: true)) }
                }
            }
            level += 1
        }
        return tiles
    }

    /// The hash tile at `level` that holds hash `position` (of that level) in a tree of `size`.
    public static func hashTile(level: Int, holding position: Int64, size: Int64) -> Tile? {
        let count = size >> Int64(8 * level)
        guard position >= 0, position < count else { return nil }
        let index = position / Int64(width)
        return Tile(level: level, index: index, width: Int(min(Int64(width), count - index * Int64(width))))
    }

    /// `1234067` → `x001/x234/067`: three-digit groups, all but the last with an `x`.
    static func encode(_ index: Int64) -> String {
        var groups: [String] = []
        var n = index
        repeat {
            let group = String(n % 1000)
            groups.insert(String(repeating: "0", count: 3 - group.count) + group, at: 0)
            n /= 1000
        } while n > 0
        return groups.enumerated().map { $0.offset < groups.count - 1 ? "x" + $0.element : $0.element }.joined(separator: "/")
    }

    static func decode(_ groups: [String]) -> Int64? {
        guard !groups.isEmpty, groups.count <= 7 else { return nil }
        var n: Int64 = 0
        for (offset, group) in groups.enumerated() {
            var digits = group
            if offset < groups.count - 1 {
                guard digits.hasPrefix("x") else { return nil }
                digits.removeFirst()
            }
            guard digits.utf8.count == 3, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int64(digits)
            else { return nil }
            let (product, overflow) = n.multipliedReportingOverflow(by: 1000)
            guard !overflow else { return nil }
            n = product + value
        }
        // The only spelling: no leading group of zeroes.
        guard encode(n) == groups.joined(separator: "/") else { return nil }
        return n
    }
}
