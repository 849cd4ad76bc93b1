import Foundation
import StepSignCrypto
import StepSignProtocol

/// Answers a `getLDASignature` with a local device key: shows the challenge text, then signs it.
/// A FIDO2 credential file (`stepsign device enroll --fido2 --credential-file`) answers through
/// the security key instead (SPEC §5.7).
enum DeviceAnswer {
    /// The `setLDASignature` parameters for `event`'s challenge: the kid and base64url r||s
    /// signature, or for a security key (the one `fido2Device` names, else the first found)
    /// its DER signature and authenticatorData.
    static func answer(_ event: JSONValue, keyFile: String, fido2Device: String? = nil) throws -> [(String, JSONValue)] {
        let contents = try SecretFile.read(path: keyFile, what: "device key")
        if let credential = FIDO2CredentialFile(contents) {
            return try credential.answer(event, file: keyFile, device: fido2Device)
        }
        let (kid, signature) = try sign(event, pem: contents, keyFile: keyFile)
        return [("deviceKeyId", .string(kid)), ("signature", .string(signature))]
    }

    /// The kid and base64url r||s signature for `event`'s challenge.
    static func sign(_ event: JSONValue, pem: [UInt8], keyFile: String) throws -> (kid: String, signature: String) {
        let key: P256PrivateKey
        do {
            key = try P256PrivateKey(pkcs8PEM: String(decoding: pem, as: UTF8.self))
        } catch {
            throw CLIError("\(keyFile) is not a P-256 private key: \(error)", exitCode: 2)
        }
        let kid = key.publicKey.thumbprint
        let offered = event["deviceKeys"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard offered.contains(kid) else {
            throw CLIError("the key in \(keyFile) (\(kid)) is not one of the user's device keys: \(offered.joined(separator: ", "))")
        }
        guard let encoded = event["challenge"]?.stringValue, let challenge = Base64URL.decode(encoded) else {
            throw CLIError("the daemon sent a malformed challenge")
        }
        show(challenge)
        return (kid, Base64URL.encode(try key.signatureES256(for: challenge)))
    }

    /// Shows the challenge text on stderr, so the user sees what is approved and who asks.
    static func show(_ challenge: [UInt8]) {
        let text = String(decoding: challenge, as: UTF8.self)
        FileHandle.standardError.write(Data("Device challenge to sign:\n\(text.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n"))\n".utf8))
    }
}
