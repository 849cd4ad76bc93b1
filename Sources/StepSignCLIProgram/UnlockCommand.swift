import ArgumentParser
import Foundation
import StepSignClient
import StepSignProtocol

/// `stepsign unlock`: a step-up that opens the SSH agent for this uid (SPEC §3.5): for the
/// window's time and uses, `ssh-keygen -Y sign` and git sign through `[ssh_agent] socket` as
/// the user, each signature in the ledger.
struct UnlockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock", abstract: "Step up and let the SSH agent sign for this uid for a while.",
        discussion: "The agent signs SSHSIG data (git commits and tags, ssh-keygen -Y sign) of the configured namespaces as USER, for connections of this uid, until the window ends: --for (at most [ssh_agent] unlock_seconds), [ssh_agent] max_uses signatures, `stepsign lock`, a logOff of USER from this uid, or a change of USER's credentials.")

    @OptionGroup var global: GlobalOptions
    @Option(help: "The user the agent signs as.") var user: String
    @Option(help: "authLevel: 1 password or device key, 4 IDV biometric.") var level: Int = 1
    @Option(help: "authenticatorType (0, or 1 with level 4).") var type: Int = 0
    @Option(name: .customLong("for"), help: ArgumentHelp("How long the window stays open: seconds, or a number with s, m or h (default: [ssh_agent] unlock_seconds).", valueName: "duration"))
    var duration: String?
    @Option(name: .customLong("password-file"), help: ArgumentHelp("Read the password from a file (first line; - is stdin).", valueName: "file"))
    var passwordFile: String?
    @Option(name: .customLong("password-fd"), help: ArgumentHelp("Read the password from a file descriptor (one line).", valueName: "fd"))
    var passwordFD: Int32?
    @Option(name: .customLong("device-key"), help: "Answer a device key (LDA) challenge with this PKCS#8 PEM private key.")
    var deviceKey: String?
    @OptionGroup var fido2Device: FIDO2DeviceOption
    @Option(name: .customLong("idv-command"), help: "Answer an IDV challenge with this program (as for `stepsign sign`).")
    var idvCommand: String?

    /// `--for`'s value in seconds: `90`, `90s`, `15m`, `1h`; nil when it is none of those.
    static func seconds(_ text: String) -> Int? {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600]
        var digits = Substring(text)
        var unit = 1
        if let last = text.last, let factor = units[last] {
            digits = text.dropLast()
            unit = factor
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let value = Int(digits), value > 0,
              value <= Int.max / unit else { return nil }
        return value * unit
    }

    func validate() throws {
        if let duration, Self.seconds(duration) == nil {
            throw ValidationError("--for: expected seconds, or a number with s, m or h (such as 15m), found \"\(duration)\"")
        }
        try SecretSources.validate(["--password-file": passwordFile], ["--password-fd": passwordFD])
    }

    func run() throws {
        try runReportingErrors {
            let connection = try global.connect()
            var parameters: [(String, JSONValue)] = [
                ("user", .string(user)), ("authLevel", .int(Int64(level))), ("authenticatorType", .int(Int64(type))),
            ]
            if let seconds = duration.flatMap(Self.seconds) { parameters.append(("seconds", .int(Int64(seconds)))) }
            let first = try connection.call("unlockAgent", parameters).requireAccepted("unlocking the SSH agent")
            let responder = StepUpResponder(user: user, passwords: PasswordReader(file: passwordFile, descriptor: passwordFD),
                                            deviceKey: deviceKey, idvCommand: idvCommand, fido2Device: fido2Device.path)
            let event = try responder.answer(first, on: connection, until: "onAuthenticateUserAndSignData")
            let status = event["status"] ?? [:]
            guard status["code"]?.int == 100 else {
                throw CLIError("not unlocked: \(StatusText.describe(status))")
            }
            let payload = event["details"]?["dataPayload"]?.stringValue ?? "the SSH agent is unlocked"
            FileHandle.standardError.write(Data("stepsign: \(payload)\n".utf8))
        }
    }
}

/// `stepsign lock`: ends this uid's SSH agent window (SPEC §3.5).
struct LockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "lock", abstract: "End this uid's SSH agent window (stepsign unlock).")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        try runReportingErrors {
            let reply = try global.connect().call("lockAgent", [:]).requireAccepted("locking the SSH agent")
            let locked = reply.result?["locked"]?.boolValue ?? false
            FileHandle.standardError.write(Data((locked ? "stepsign: the SSH agent is locked\n"
                                                        : "stepsign: the SSH agent had no window open for this uid\n").utf8))
        }
    }
}
