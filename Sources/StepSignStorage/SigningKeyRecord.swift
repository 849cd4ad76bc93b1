import Foundation

/// Metadata of one daemon signing key; the key material lives in a PEM file (SPEC §2).
public struct SigningKeyRecord: Sendable, Equatable {
    /// The RFC 7638 JWK thumbprint.
    public var kid: String
    /// When the key was created.
    public var createdAt: Date
    /// Whether this is the key that signs now; retired keys stay for verification.
    public var active: Bool
    /// When the key was revoked (`admin.revokeKey`), or nil. A revoked key is never active,
    /// never published, and its signatures no longer verify.
    public var revokedAt: Date?
    /// The daemon instance (`instance` in its config) that holds the private key; "" for keys
    /// made before instances were recorded.
    public var instance: String

    public init(kid: String, createdAt: Date, active: Bool, revokedAt: Date? = nil, instance: String = "") {
        self.kid = kid
        self.createdAt = createdAt
        self.active = active
        self.revokedAt = revokedAt
        self.instance = instance
    }
}
