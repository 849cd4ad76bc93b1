import Foundation

/// Metadata of one daemon signing key; the key material lives in a PEM file (SPEC §2).
public struct SigningKeyRecord: Sendable, Equatable {
    /// The RFC 7638 JWK thumbprint.
    public var kid: String
    /// When the key was created.
    public var createdAt: Date
    /// Whether this is the key that signs now; retired keys stay for verification.
    public var active: Bool

    public init(kid: String, createdAt: Date, active: Bool) {
        self.kid = kid
        self.createdAt = createdAt
        self.active = active
    }
}
