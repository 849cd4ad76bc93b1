import ArgumentParser
import Foundation
import StepSignProtocol

/// `stepsign keys export [--jwks|--pem|--log-keys|--ssh|--ssh-allowed-signers PRINCIPAL]`: the
/// daemon's public keys, for `stepsign-verify --keys`, its log keys, for `stepsign-verify
/// --log-key`, or its signing keys for SSH (SPEC §3.5): the active one as an SSH public key
/// line, or every published one as `allowed_signers` lines for `ssh-keygen -Y verify` and git.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "keys", abstract: "Public keys.",
                                                    subcommands: [Export.self])

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "export",
                                                        abstract: "Print every public key, retired ones included.",
                                                        discussion: "Each format is data for stepsign-verify (--keys, or --log-key for --log-keys: C2SP note verifier keys, one a line), a JOSE library, or OpenSSH (--ssh: the active key for the SSH agent's user.signingkey; --ssh-allowed-signers: gpg.ssh.allowedSignersFile lines), so there is no prose form.")

        enum Format: String, EnumerableFlag {
            case jwks, pem, logKeys, ssh
        }

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Output format: a JWKS (JSON), a PEM bundle, the log keys that sign checkpoints, or the active key as an SSH public key.")
        var format: Format = .jwks
        @Option(name: .customLong("ssh-allowed-signers"), help: ArgumentHelp("Print an allowed_signers line for PRINCIPAL per published key, valid from when it was active (ssh-keygen -Y verify, git's gpg.ssh.allowedSignersFile).", valueName: "principal"))
        var allowedSignersPrincipal: String?

        func validate() throws {
            if allowedSignersPrincipal != nil, format != .jwks {
                throw ValidationError("--ssh-allowed-signers cannot be used with another format")
            }
            if let principal = allowedSignersPrincipal, principal.isEmpty
                || principal.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0 == "\"" || $0.value < 0x20 }) {
                throw ValidationError("--ssh-allowed-signers: the principal must be one word (no spaces or quotes)")
            }
        }

        func run() throws {
            try runReportingErrors {
                if let principal = allowedSignersPrincipal {
                    for key in try sshKeys() { print(Self.allowedSignersLine(principal: principal, key: key)) }
                    return
                }
                if format == .ssh {
                    guard let active = try sshKeys().first(where: { $0["active"]?.boolValue == true }) else {
                        throw CLIError("the daemon lists no active signing key")
                    }
                    print(active["publicKey"]?.stringValue ?? "")
                    return
                }
                let reply = try global.connect().call("getPublicKeys", ["format": format == .pem ? "pem" : "jwks"])
                    .requireAccepted("getPublicKeys")
                switch format {
                case .jwks: JSONOutput.print(reply.result?["jwks"] ?? [:])
                case .pem: print(reply.result?["pem"]?.stringValue ?? "", terminator: "")
                case .logKeys:
                    for key in reply.result?["logKeys"]?.arrayValue ?? [] { print(key.stringValue ?? "") }
                case .ssh: break
                }
            }
        }

        /// The published keys as SSH public keys, oldest first (`getPublicKeys` format "ssh").
        private func sshKeys() throws -> [JSONValue] {
            try global.connect().call("getPublicKeys", ["format": "ssh"]).requireAccepted("getPublicKeys")
                .result?["ssh"]?.arrayValue ?? []
        }

        /// One `allowed_signers` line (ssh-keygen(1), ALLOWED SIGNERS): the principal, the
        /// key's validity as UTC times, and the key with its kid.
        static func allowedSignersLine(principal: String, key: JSONValue) -> String {
            var options: [String] = []
            if let after = key["validAfter"]?.intValue { options.append("valid-after=\"\(timestamp(after))\"") }
            if let before = key["validBefore"]?.intValue { options.append("valid-before=\"\(timestamp(before))\"") }
            let publicKey = key["publicKey"]?.stringValue ?? ""
            return ([principal] + (options.isEmpty ? [] : [options.joined(separator: ",")]) + [publicKey]).joined(separator: " ")
        }

        /// Unix seconds as OpenSSH reads an absolute UTC time: `YYYYMMDDHHMMSSZ`.
        static func timestamp(_ seconds: Int64) -> String {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second],
                                            from: Date(timeIntervalSince1970: TimeInterval(seconds)))
            func two(_ value: Int?) -> String { let v = value ?? 0; return v < 10 ? "0\(v)" : "\(v)" }
            return "\(c.year ?? 1970)\(two(c.month))\(two(c.day))\(two(c.hour))\(two(c.minute))\(two(c.second))Z"
        }
    }
}
