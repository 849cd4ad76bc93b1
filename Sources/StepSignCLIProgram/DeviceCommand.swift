import ArgumentParser
import StepSignProtocol
import Foundation

/// `stepsign device enroll`: a user registers a device key for LDA challenges.
struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "device", abstract: "Device keys (LDA).",
                                                    subcommands: [Enroll.self])

    struct Enroll: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Log in and enroll a P-256 public key (PEM or JWK).",
                                                        discussion: "Prints the new key's kid; --json prints {deviceKeyId}.")

        @OptionGroup var global: GlobalOptions
        @Option(help: "The user ID.") var user: String
        @Option(name: .customLong("public-key"), help: "The device's public key: SPKI PEM or a JWK file.") var publicKey: String
        @Option(help: "A name for the device.") var label: String = ""
        @OptionGroup var passwords: PasswordOptions
        @OptionGroup var output: JSONFlag

        func run() throws {
            try runReportingErrors {
                guard let data = FileManager.default.contents(atPath: publicKey) else {
                    throw CLIError("cannot read the public key file \(publicKey)", exitCode: 2)
                }
                let flow = try LoginFlow.loggedIn(global, user: user, options: passwords)
                let reply = try flow.send("enrollDeviceKey", ["publicKey": String(decoding: data, as: UTF8.self), "label": label])
                let kid = reply.result?["deviceKeyId"]?.stringValue
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
