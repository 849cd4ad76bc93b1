/// The FIDO2 side of a device key that is a security key (SPEC §5.7): the credential ID the
/// client names to the authenticator, and the highest signature counter seen so far.
public struct FIDO2Credential: Sendable, Equatable {
    /// The credential ID, base64url.
    public var credentialID: String
    /// The signature counter of the last accepted assertion (0 before the first).
    public var signCount: UInt32

    public init(credentialID: String, signCount: UInt32) {
        self.credentialID = credentialID
        self.signCount = signCount
    }
}
