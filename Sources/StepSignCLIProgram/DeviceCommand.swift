import ArgumentParser
import StepSignCrypto
import StepSignProtocol
import Foundation

/// `stepsign device enroll`: a user registers a device key for LDA challenges: a P-256 public
/// key, or (`--fido2`) a new credential on a FIDO2 security key (SPEC §5.7).
struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "device", abstract: "Device keys (LDA).",
                                                    subcommands: [Enroll.self])

    struct Enroll: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Log in and enroll a P-256 public key (PEM or JWK), or a FIDO2 security key.",
            discussion: """
                Prints the new key's kid; --json prints {deviceKeyId}. With --fido2 the attached security key \
                makes a credential (touch, and its PIN or biometric: user verification is required) for the \
                relying party --rp-id (the daemon's [lda] fido2_rp_id); --credential-file names the file that \
                --device-key then takes to answer step-ups with the key; --fido2-device names the key (default: \
                the first found). Without a security key attached: exit 69.
                """)

        @OptionGroup var global: GlobalOptions
        @Option(help: "The user ID.") var user: String
        @Option(name: .customLong("public-key"), help: "The device's public key: SPKI PEM or a JWK file.") var publicKey: String?
        @Flag(help: "Enroll a FIDO2 security key (libfido2) instead of a public key file.") var fido2 = false
        @Option(name: .customLong("credential-file"), help: "With --fido2: the new file (mode 0600) naming the credential, for --device-key.")
        var credentialFile: String?
        @Option(name: .customLong("rp-id"), help: "With --fido2: the relying party ID, the daemon's [lda] fido2_rp_id.")
        var rpID = "stepsign"
        @OptionGroup var fido2Device: FIDO2DeviceOption
        @Option(help: "A name for the device.") var label: String = ""
        @OptionGroup var passwords: PasswordOptions
        @OptionGroup var output: JSONFlag

        func validate() throws {
            guard fido2 != (publicKey != nil) else { throw ValidationError("give exactly one of --public-key and --fido2") }
            guard fido2 == (credentialFile != nil) else { throw ValidationError("--credential-file goes with --fido2, and --fido2 needs it") }
            guard fido2 || fido2Device.path == nil else { throw ValidationError("--fido2-device goes with --fido2") }
        }

        func run() throws {
            try runReportingErrors {
                let key: (String, JSONValue)
                var credential: FIDO2CredentialFile?
                if let publicKey {
                    guard let data = FileManager.default.contents(atPath: publicKey) else {
                        throw CLIError("cannot read the public key file \(publicKey)", exitCode: 2)
                    }
                    key = ("publicKey", .string(String(decoding: data, as: UTF8.self)))
                } else {
                    if let credentialFile, FileManager.default.fileExists(atPath: credentialFile) {
                        throw CLIError("\(credentialFile) exists already", exitCode: CLIError.usage)
                    }
                    // The key is asked before the login, so a missing key costs no password.
                    let securityKey = try FIDO2SecurityKey.open(fido2Device.path)
                    let made = try securityKey.makeCredential(
                        rpID: rpID, user: user, pin: { try PasswordReader.readFromTerminal(prompt: "PIN of the security key: ") })
                    var members: [(String, JSONValue)] = [("publicKey", .string(Base64URL.encode(made.cose))),
                                                          ("credentialId", .string(Base64URL.encode(made.credentialID)))]
                    if let attestation = made.attestation { members.append(("attestation", attestation)) }
                    key = ("fido2", .object(members))
                    credential = FIDO2CredentialFile(deviceKeyID: "", credentialID: Base64URL.encode(made.credentialID), rpID: rpID)
                }
                let flow = try LoginFlow.loggedIn(global, user: user, options: passwords)
                let reply = try flow.connection.call("enrollDeviceKey", [key, ("label", .string(label))]).requireAccepted("enrollment")
                let kid = reply.result?["deviceKeyId"]?.stringValue
                if var credential, let credentialFile, let kid {
                    credential.deviceKeyID = kid
                    try ClusterCommand.writeNewPrivateFile(credentialFile, credential.json.jsonBytes + [UInt8(ascii: "\n")])
                }
                if output.json {
                    JSONOutput.print(["deviceKeyId": kid.map { .string($0) } ?? .null])
                } else {
                    print(kid ?? "")
                }
                _ = try flow.send("logOff")
            }
        }
    }
}
