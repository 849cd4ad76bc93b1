import Foundation

/// An LDA device key enrolled for a user (SPEC §3.2 `enrollDeviceKey`).
public struct DeviceKeyRecord: Sendable, Equatable {
    /// The RFC 7638 JWK thumbprint of the public key; unique across all users.
    public var kid: String
    /// The owner.
    public var user: String
    /// The public key as a JWK JSON document.
    public var publicKeyJWK: String
    /// A label chosen at enrolment.
    public var label: String
    /// When the key was enrolled.
    public var createdAt: Date
    /// When the key was revoked, or nil while it is usable.
    public var revokedAt: Date?

    public init(kid: String, user: String, publicKeyJWK: String, label: String, createdAt: Date, revokedAt: Date? = nil) {
        self.kid = kid
        self.user = user
        self.publicKeyJWK = publicKeyJWK
        self.label = label
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}
