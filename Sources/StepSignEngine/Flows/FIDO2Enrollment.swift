import Foundation
import StepSignConfig
import StepSignCrypto
import StepSignProtocol

/// The `fido2` member of `enrollDeviceKey` (SPEC §5.7): a security key's new credential, as
/// `{"publicKey": COSE ES256 key, "credentialId": ID}`, both base64url, and with
/// `[lda] fido2_attestation = "direct"` its packed attestation too: `"attestation": {"fmt":
/// "packed", "authData", "sig", "x5c": [DER, ...], "clientDataHash"}` (base64url), the fields
/// of the authenticator's attestation object as libfido2 hands them out. With "none" an
/// attestation is not read.
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
        for key in fields.keys where !["publicKey", "credentialId", "attestation"].contains(key) {
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
            try Self.checkPackedAttestation(fields["attestation"], cose: cose, credentialID: id, config: config)
        }
    }

    /// A packed attestation (WebAuthn §8.2) of this credential, by a certificate that chains to
    /// `fido2_attestation_roots`: its signature over authData ‖ clientDataHash, and an authData
    /// for `fido2_rp_id` with UP, UV and the attested credential (this ID and this COSE key).
    static func checkPackedAttestation(_ value: JSONValue?, cose: [UInt8], credentialID: [UInt8],
                                       config: StepSignConfiguration.LDA) throws(StepSignError) {
        guard case let .object(members)? = value else {
            throw .invalid("fido2_attestation is \"direct\": \"fido2.attestation\" (a packed attestation) is required")
        }
        let fields = Dictionary(members, uniquingKeysWith: { first, _ in first })
        func bytes(_ key: String) throws(StepSignError) -> [UInt8] {
            guard case let .string(text)? = fields[key], let decoded = Base64URL.decode(text) else {
                throw .invalid("\"fido2.attestation.\(key)\" must be base64url")
            }
            return decoded
        }
        guard case .string("packed")? = fields["fmt"] else { throw .invalid("only \"packed\" attestations are checked") }
        guard case let .array(chain)? = fields["x5c"], !chain.isEmpty, chain.count <= 8 else {
            throw .invalid("\"fido2.attestation.x5c\" must be 1 to 8 certificates (self attestation is not trusted)")
        }
        var certificates: [[UInt8]] = []
        for item in chain {
            guard case let .string(text) = item, let der = Base64URL.decode(text) else {
                throw .invalid("\"fido2.attestation.x5c\" must hold base64url DER certificates")
            }
            certificates.append(der)
        }
        let authData = try bytes("authData")
        let signature = try bytes("sig")
        let clientDataHash = try bytes("clientDataHash")
        guard clientDataHash.count == 32 else { throw .invalid("\"fido2.attestation.clientDataHash\" must be 32 bytes") }
        var roots = config.fido2AttestationRoots
        if roots.hasPrefix("/") {
            // A file, read at each enrolment (enrolments are rare; a renewed bundle needs no reload).
            guard let data = FileManager.default.contents(atPath: roots) else {
                throw StepSignError(.internalError, "cannot read fido2_attestation_roots \(roots)")
            }
            roots = String(decoding: data, as: UTF8.self)
        }
        let leaf: P256PublicKey
        do {
            leaf = try AttestationCertificates.verifiedLeafKey(certificates: certificates, rootsPEM: roots)
        } catch {
            throw .invalid("attestation refused: \(error)")
        }
        guard let raw = try? ECDSASignature.rawFromDER(signature), leaf.isValidSignatureES256(raw, for: authData + clientDataHash) else {
            throw .invalid("attestation refused: its signature does not verify")
        }
        // authData: rpIdHash(32) flags(1) counter(4) aaguid(16) idLength(2) id COSE key [extensions].
        guard let head = FIDO2AuthenticatorData(authData), authData.count >= 55,
              ConstantTime.equals(head.rpIDHash, SHA256.hash(Array(config.fido2RPID.utf8)))
        else { throw .invalid("attestation refused: its authData is not for fido2_rp_id") }
        guard head.isUserPresent, head.isUserVerified, head.flags & 0x40 != 0 else {
            throw .invalid("attestation refused: its authData lacks UP, UV or the attested credential")
        }
        let idLength = Int(authData[53]) << 8 | Int(authData[54])
        let idEnd = 55 + idLength
        guard authData.count >= idEnd + cose.count, Array(authData[55..<idEnd]) == credentialID,
              Array(authData[idEnd..<idEnd + cose.count]) == cose
        else { throw .invalid("attestation refused: it attests another credential") }
    }
}
