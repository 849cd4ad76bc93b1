/// The fixed head of a FIDO2 assertion's `authenticatorData` (WebAuthn §6.1): the SHA-256 of
/// the relying party ID, the flags byte and the big-endian signature counter. Extensions and
/// attested credential data may follow; they are covered by the signature and not read.
public struct FIDO2AuthenticatorData: Sendable, Equatable {
    /// Flag bit: the user was present (touched the key).
    public static let userPresent: UInt8 = 0x01
    /// Flag bit: the user was verified (PIN or biometric).
    public static let userVerified: UInt8 = 0x04

    public let rpIDHash: [UInt8]
    public let flags: UInt8
    public let signCount: UInt32

    /// Reads the head; nil when `bytes` is shorter than its 37 bytes.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count >= 37 else { return nil }
        rpIDHash = Array(bytes[0..<32])
        flags = bytes[32]
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
    }

    public var isUserPresent: Bool { flags & Self.userPresent != 0 }
    public var isUserVerified: Bool { flags & Self.userVerified != 0 }
}
