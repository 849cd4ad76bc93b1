import ArgumentParser
import StepSignProtocol

/// `stepsign keys export [--jwks|--pem]`: the daemon's public keys, for `stepsign-verify`.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "keys", abstract: "Public keys.",
                                                    subcommands: [Export.self])

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "export",
                                                        abstract: "Print every public key, retired ones included.",
                                                        discussion: "Both formats are data for stepsign-verify --keys or a JOSE library, so there is no prose form.")

        enum Format: String, EnumerableFlag {
            case jwks, pem
        }

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Output format: a JWKS (JSON) or a PEM bundle.") var format: Format = .jwks

        func run() throws {
            try runReportingErrors {
                let reply = try global.connect().call("getPublicKeys", ["format": format.rawValue])
                    .requireAccepted("getPublicKeys")
                switch format {
                case .jwks: JSONOutput.print(reply.result?["jwks"] ?? [:])
                case .pem: print(reply.result?["pem"]?.stringValue ?? "", terminator: "")
                }
            }
        }
    }
}
