import Foundation

/// Metadata and public half of one daemon signing key; the private key lives in a PEM file in
/// the state directory of the daemon that made it (SPEC §2, §5.2).
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
    /// The public half as SubjectPublicKeyInfo PEM, so that every daemon on a shared database
    /// can publish and check the keys of the others (SPEC §5.2); nil for a key recorded before
    /// the column existed, until the daemon holding it fills it in.
    public var publicKeyPEM: String?
    /// The key's endorsement (SPEC §5.4): a `stepsign-key-endorsement+jwt` JWS by the cluster
    /// root or the key's predecessor, or nil. Only a chain of valid endorsements ending at the
    /// configured root makes another instance's key trusted; the column alone proves nothing.
    public var endorsement: String?
    /// The log index of the key's revocation event (SPEC §5.4), or nil (not revoked, or
    /// revoked before revocations were logged). Its signatures below it stay valid.
    public var revokedIndex: Int64?

    public init(kid: String, createdAt: Date, active: Bool, revokedAt: Date? = nil, instance: String = "",
                publicKeyPEM: String? = nil, endorsement: String? = nil, revokedIndex: Int64? = nil) {
        self.kid = kid
        self.createdAt = createdAt
        self.active = active
        self.revokedAt = revokedAt
        self.instance = instance
        self.publicKeyPEM = publicKeyPEM
        self.endorsement = endorsement
        self.revokedIndex = revokedIndex
    }
}
