import StepSignCrypto

/// A witness's C2SP tlog-cosignature v1 of a checkpoint (Ed25519, signature type 0x04): the
/// statement that, at `timestamp`, the largest consistent tree the witness had seen of the
/// checkpoint's log has the checkpoint's root (SPEC §5.6).
///
/// On a note's signature line it is `key ID ‖ timestamp (u64, big-endian) ‖ Ed25519 signature`;
/// the signed message is `cosignature/v1`, `time <timestamp>` (two lines) and the note's text.
public struct Cosignature: Sendable, Equatable {
    /// The bytes of a cosignature after its key ID: the timestamp and the signature.
    public static let size = 8 + 64

    /// When the witness cosigned, in seconds since the epoch (at most 2^63 − 1).
    public var timestamp: UInt64
    /// The Ed25519 signature over ``message(text:timestamp:)``.
    public var signature: [UInt8]

    public init(timestamp: UInt64, signature: [UInt8]) throws(NoteError) {
        guard timestamp <= UInt64(Int64.max) else { throw .malformed("a cosignature's timestamp is at most 2^63 - 1") }
        guard signature.count == 64 else { throw .malformed("an Ed25519 cosignature is 64 bytes") }
        self.timestamp = timestamp
        self.signature = signature
    }

    /// Reads a cosignature line's bytes after the key ID.
    public init(bytes: [UInt8]) throws(NoteError) {
        guard bytes.count == Self.size else { throw .malformed("a cosignature is a timestamp and 64 signature bytes") }
        try self.init(timestamp: bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }, signature: Array(bytes.dropFirst(8)))
    }

    /// The bytes after the key ID on the signature line.
    public var bytes: [UInt8] {
        (0..<8).reversed().map { UInt8(truncatingIfNeeded: timestamp >> ($0 * 8)) } + signature
    }

    /// The message a witness signs: `cosignature/v1\ntime <timestamp>\n` and the note's text.
    public static func message(text: [UInt8], timestamp: UInt64) -> [UInt8] {
        Array("cosignature/v1\ntime \(timestamp)\n".utf8) + text
    }

    /// Cosigns `text` (a checkpoint's note text) with a witness's key at `timestamp`.
    public static func sign(text: [UInt8], key: Ed25519PrivateKey, timestamp: UInt64) throws -> Cosignature {
        try Cosignature(timestamp: timestamp, signature: try key.signature(for: message(text: text, timestamp: timestamp)))
    }

    /// Whether this cosignature of `text` verifies with the witness's public key.
    public func isValid(text: [UInt8], key: Ed25519PublicKey) -> Bool {
        key.isValidSignature(signature, for: Self.message(text: text, timestamp: timestamp))
    }
}
