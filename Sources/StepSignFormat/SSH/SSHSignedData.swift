/// The data an SSH signature of OpenSSH's PROTOCOL.sshsig signs: the magic `SSHSIG` (six
/// bytes, no length), then the strings namespace, reserved, hash algorithm and the hash of
/// the message. `ssh-keygen -Y sign` and git send this blob to the agent; anything else (an
/// SSH login's session data) does not parse as one.
public struct SSHSignedData: Sendable, Equatable {
    /// The magic preamble.
    public static let magic: [UInt8] = Array("SSHSIG".utf8)
    /// The hash algorithms PROTOCOL.sshsig allows, with their digest lengths.
    public static let hashLengths = ["sha256": 32, "sha512": 64]

    /// The namespace the signature is for (`git`, `file`, …): a signature for one namespace
    /// never verifies for another.
    public var namespace: String
    /// The reserved field (empty as OpenSSH writes it).
    public var reserved: [UInt8]
    /// `sha256` or `sha512`.
    public var hashAlgorithm: String
    /// The hash of the message.
    public var hash: [UInt8]

    public init(namespace: String, reserved: [UInt8] = [], hashAlgorithm: String, hash: [UInt8]) {
        self.namespace = namespace
        self.reserved = reserved
        self.hashAlgorithm = hashAlgorithm
        self.hash = hash
    }

    /// Parses `blob`; nil when it is not exactly one SSHSIG signed-data blob: the magic, a
    /// namespace of printable ASCII, a known hash algorithm and a hash of its length, and
    /// nothing after.
    public init?(parsing blob: [UInt8]) {
        var reader = SSHWireReader(blob)
        guard reader.raw(Self.magic.count) == Self.magic,
              let namespace = reader.string(), !namespace.isEmpty,
              namespace.allSatisfy({ (0x21...0x7E).contains($0) }),
              let reserved = reader.string(),
              let algorithm = reader.string().map({ String(decoding: $0, as: UTF8.self) }),
              let length = Self.hashLengths[algorithm],
              let hash = reader.string(), hash.count == length,
              reader.isAtEnd
        else { return nil }
        self.init(namespace: String(decoding: namespace, as: UTF8.self), reserved: reserved, hashAlgorithm: algorithm, hash: hash)
    }

    /// The blob, as ``init(parsing:)`` reads it.
    public var bytes: [UInt8] {
        var writer = SSHWireWriter()
        for byte in Self.magic { writer.byte(byte) }
        writer.string(namespace)
        writer.string(reserved)
        writer.string(hashAlgorithm)
        writer.string(hash)
        return writer.bytes
    }
}
