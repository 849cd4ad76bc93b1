/// An entry bundle of C2SP tlog-tiles: the log's entries (here each one's leaf data, the JWS
/// bytes, SPEC §5.5) one after the other, each after its length as a big-endian `UInt16`.
public enum EntryBundle {
    /// The longest entry a bundle can hold.
    public static let maxEntrySize = Int(UInt16.max)

    /// The bundle of `entries`; nil if one is longer than ``maxEntrySize``.
    public static func encode(_ entries: [[UInt8]]) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.reduce(0) { $0 + 2 + $1.count })
        for entry in entries {
            guard entry.count <= maxEntrySize else { return nil }
            bytes.append(UInt8(entry.count >> 8))
            bytes.append(UInt8(entry.count & 0xff))
            bytes.append(contentsOf: entry)
        }
        return bytes
    }

    /// The entries of `bytes`, which must be exactly `count` of them.
    public static func decode(_ bytes: [UInt8], count: Int) throws(TileError) -> [[UInt8]] {
        var entries: [[UInt8]] = []
        entries.reserveCapacity(count)
        var offset = 0
        while offset < bytes.count {
            guard offset + 2 <= bytes.count else { throw .malformed("an entry bundle ends inside a length") }
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            offset += 2
            guard offset + length <= bytes.count else { throw .malformed("an entry bundle ends inside an entry") }
            entries.append(Array(bytes[offset..<offset + length]))
            offset += length
            guard entries.count <= count else { throw .malformed("an entry bundle holds more than \(count) entries") }
        }
        guard entries.count == count else { throw .malformed("an entry bundle holds \(entries.count) entries, not \(count)") }
        return entries
    }
}

/// Why published tiles were refused.
public enum TileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not a tile or bundle of the size and form C2SP tlog-tiles gives.
    case malformed(String)
    /// A tile the tree of the checkpoint needs could not be read.
    case missing(String)
    /// The tiles do not hash to what the checkpoint (or another tile) says.
    case mismatch(String)

    public var description: String {
        switch self {
        case let .malformed(why): "malformed: \(why)"
        case let .missing(why): "missing: \(why)"
        case let .mismatch(why): "mismatch: \(why)"
        }
    }
}
