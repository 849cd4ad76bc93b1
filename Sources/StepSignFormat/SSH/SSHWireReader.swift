/// Reads the SSH wire encoding (RFC 4251 §5) from a byte buffer: `byte`, `uint32` and
/// `string`, each bounded by the bytes that are there, so a short or lying length is an
/// error (nil), never a read past the end.
public struct SSHWireReader {
    private let bytes: [UInt8]
    private var offset: Int

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
    }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { offset == bytes.count }

    /// One byte.
    public mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A big-endian `uint32`.
    public mutating func uint32() -> UInt32? {
        guard bytes.count - offset >= 4 else { return nil }
        defer { offset += 4 }
        return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    /// `count` raw bytes.
    public mutating func raw(_ count: Int) -> [UInt8]? {
        guard count >= 0, bytes.count - offset >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    /// A `string`: a `uint32` length and that many bytes.
    public mutating func string() -> [UInt8]? {
        let start = offset
        guard let length = uint32(), let value = raw(Int(length)) else {
            offset = start
            return nil
        }
        return value
    }
}

/// Writes the SSH wire encoding (RFC 4251 §5).
public struct SSHWireWriter {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func byte(_ value: UInt8) {
        bytes.append(value)
    }

    public mutating func uint32(_ value: UInt32) {
        bytes.append(contentsOf: [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)])
    }

    public mutating func string(_ value: some Collection<UInt8>) {
        uint32(UInt32(value.count))
        bytes.append(contentsOf: value)
    }

    public mutating func string(_ value: String) {
        string(Array(value.utf8))
    }

    /// An `mpint` of a non-negative big-endian magnitude: leading zeros dropped, one zero
    /// byte added when the top bit is set (two's complement), zero as the empty string.
    public mutating func mpint(_ magnitude: some Collection<UInt8>) {
        var value = Array(magnitude.drop(while: { $0 == 0 }))
        if let first = value.first, first & 0x80 != 0 { value.insert(0, at: 0) }
        string(value)
    }
}
