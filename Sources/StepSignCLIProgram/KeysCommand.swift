import ArgumentParser
import StepSignProtocol

/// `stepsign keys export [--jwks|--pem|--log-keys]`: the daemon's public keys, for
/// `stepsign-verify --keys`, or its log keys, for `stepsign-verify --log-key`.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "keys", abstract: "Public keys.",
                                                    subcommands: [Export.self])

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "export",
                                                        abstract: "Print every public key, retired ones included.",
                                                        discussion: "Each format is data for stepsign-verify (--keys, or --log-key for --log-keys: C2SP note verifier keys, one a line) or a JOSE library, so there is no prose form.")

        enum Format: String, EnumerableFlag {
            case jwks, pem, logKeys
        }

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Output format: a JWKS (JSON), a PEM bundle, or the log keys that sign checkpoints.") var format: Format = .jwks

        func run() throws {
            try runReportingErrors {
                let reply = try global.connect().call("getPublicKeys", ["format": format == .pem ? "pem" : "jwks"])
                    .requireAccepted("getPublicKeys")
                switch format {
                case .jwks: JSONOutput.print(reply.result?["jwks"] ?? [:])
                case .pem: print(reply.result?["pem"]?.stringValue ?? "", terminator: "")
                case .logKeys:
                    for key in reply.result?["logKeys"]?.arrayValue ?? [] { print(key.stringValue ?? "") }
                }
            }
        }
    }
}
