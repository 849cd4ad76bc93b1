import Foundation
import StepSignCrypto
import StepSignProtocol

/// Answers a `getLDASignature` with a local device key: shows the challenge text, then signs it.
enum DeviceAnswer {
    /// The kid and base64url r||s signature for `event`'s challenge.
    static func sign(_ event: JSONValue, keyFile: String) throws -> (kid: String, signature: String) {
        // Refused when group or others may open it, as ssh refuses a private key (SPEC §8).
        let pem = try SecretFile.read(path: keyFile, what: "device key")
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
        let text = String(decoding: challenge, as: UTF8.self)
        FileHandle.standardError.write(Data("Device challenge to sign:\n\(text.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n"))\n".utf8))
        return (kid, Base64URL.encode(try key.signatureES256(for: challenge)))
    }
}
