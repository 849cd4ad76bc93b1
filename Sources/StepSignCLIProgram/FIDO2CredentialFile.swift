import Foundation
import StepSignCrypto
import StepSignProtocol

/// What `stepsign device enroll --fido2 --credential-file FILE` writes and `--device-key FILE`
/// reads (SPEC §5.7): `{"fido2": {"deviceKeyId", "credentialId", "rpId"}}`. It names the
/// credential on the security key; the private key never leaves the key.
struct FIDO2CredentialFile {
    var deviceKeyID: String
    var credentialID: String
    var rpID: String

    init(deviceKeyID: String, credentialID: String, rpID: String) {
        self.deviceKeyID = deviceKeyID
        self.credentialID = credentialID
        self.rpID = rpID
    }

    /// The file's contents, or nil when they are not a credential file (a PEM key, say).
    init?(_ contents: [UInt8]) {
        guard contents.first == UInt8(ascii: "{"), let value = try? JSONParser.parse(contents),
              let fido2 = value["fido2"], let kid = fido2["deviceKeyId"]?.stringValue,
              let id = fido2["credentialId"]?.stringValue, let rp = fido2["rpId"]?.stringValue
        else { return nil }
        self.init(deviceKeyID: kid, credentialID: id, rpID: rp)
    }

    var json: JSONValue {
        .object([("fido2", .object([("deviceKeyId", .string(deviceKeyID)), ("credentialId", .string(credentialID)),
                                    ("rpId", .string(rpID))]))])
    }

    /// Asks the security key to answer `event`: shows the challenge, then the key signs its
    /// SHA-256 (the clientDataHash) after a touch and the PIN or biometric. `device` names the
    /// key (`--fido2-device`); nil: the first one found.
    func answer(_ event: JSONValue, file: String, device: String?) throws -> [(String, JSONValue)] {
        let offered = event["deviceKeys"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard offered.contains(deviceKeyID) else {
            throw CLIError("the security key in \(file) (\(deviceKeyID)) is not one of the user's device keys: \(offered.joined(separator: ", "))")
        }
        guard let encoded = event["challenge"]?.stringValue, let challenge = Base64URL.decode(encoded),
              let credential = Base64URL.decode(credentialID)
        else { throw CLIError("the daemon sent a malformed challenge, or \(file) is damaged") }
        DeviceAnswer.show(challenge)
        let key = try FIDO2SecurityKey.open(device)
        let (data, signature) = try key.assertion(rpID: rpID, credentialID: credential, clientDataHash: SHA256.hash(challenge),
                                                 pin: { try PasswordReader.readFromTerminal(prompt: "PIN of the security key: ") })
        return [("deviceKeyId", .string(deviceKeyID)), ("signature", .string(Base64URL.encode(signature))),
                ("authenticatorData", .string(Base64URL.encode(data)))]
    }
}
