import StepSignConfig
import StepSignCrypto
import StepSignProtocol

/// The `fido2` member of `enrollDeviceKey` (SPEC §5.7): a security key's new credential, as
/// `{"publicKey": COSE ES256 key, "credentialId": ID}`, both base64url, and with
/// `[lda] fido2_attestation = "direct"` its `attestationObject` too.
struct FIDO2Enrollment {
    /// The longest credential ID kept (CTAP2 allows up to 1023 bytes).
    static let credentialIDLimit = 1023

    var publicKey: P256PublicKey
    /// The credential ID, base64url (unpadded, as it came).
    var credentialID: String

    init(_ value: JSONValue, config: StepSignConfiguration.LDA) throws(StepSignError) {
        guard case let .object(members) = value else {
            throw .invalid("\"fido2\" must be an object with \"publicKey\" and \"credentialId\"")
        }
        let fields = Dictionary(members, uniquingKeysWith: { first, _ in first })
        for key in fields.keys where !["publicKey", "credentialId", "attestationObject"].contains(key) {
            throw .invalid("unknown member \"\(key)\" in \"fido2\"")
        }
        guard case let .string(coseText)? = fields["publicKey"], let cose = Base64URL.decode(coseText) else {
            throw .invalid("\"fido2.publicKey\" must be a COSE key, base64url")
        }
        guard case let .string(idText)? = fields["credentialId"], let id = Base64URL.decode(idText),
              (1...Self.credentialIDLimit).contains(id.count)
        else {
            throw .invalid("\"fido2.credentialId\" must be 1 to \(Self.credentialIDLimit) bytes, base64url")
        }
        do {
            publicKey = try COSEKey.es256PublicKey(cose)
        } catch {
            throw .invalid("\"fido2.publicKey\" is not a COSE ES256 P-256 key: \(error)")
        }
        credentialID = Base64URL.encode(id)
        if config.fido2Attestation == "direct" {
            // Checking a packed attestation against fido2_attestation_roots is not built yet:
            // refuse rather than enroll a key whose maker was not checked.
            throw StepSignError(.notSupported, "fido2_attestation = \"direct\" is not supported by this daemon yet")
        }
    }
}
