import ArgumentParser
import Foundation
import StepSignClient
import StepSignVersion

/// `stepsign`: the client and admin CLI (SPEC §8).
@main
struct StepSignCLI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stepsign",
        abstract: "Ask stepsignd to sign, and administer it.",
        version: StepSignVersion.current,
        subcommands: [SignCommand.self, LoginCommand.self, PasswdCommand.self, ForgotPasswordCommand.self,
                      DeviceCommand.self, StatusCommand.self, KeysCommand.self, AdminCommand.self]
    )

    @OptionGroup var global: GlobalOptions
}

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "The daemon's socket (else $STEPSIGN_SOCKET, else /run/stepsign/stepsignd.sock).")
    var socket: String?

    /// The socket path to use.
    var socketPath: String {
        socket ?? ProcessInfo.processInfo.environment["STEPSIGN_SOCKET"] ?? StepSignConnection.defaultSocketPath
    }

    /// Connects, or fails with a message naming the socket.
    func connect() throws -> StepSignConnection {
        do {
            return try StepSignConnection(socketPath: socketPath)
        } catch {
            throw CLIError("cannot reach stepsignd at \(socketPath): \(error)")
        }
    }
}

/// A failure the CLI reports on stderr before exiting with `exitCode`.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    var exitCode: Int32

    init(_ description: String, exitCode: Int32 = 1) {
        self.description = description
        self.exitCode = exitCode
    }
}

extension ClientReply {
    /// Throws a CLIError unless the request was accepted.
    func requireAccepted(_ what: String) throws -> ClientReply {
        guard code == 0 else { throw CLIError("\(what) refused: error \(code): \(message)") }
        return self
    }
}

/// Writes JSON for scripts.
enum JSONOutput {
    static func print(_ object: Any) {
        let options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
        if let data = try? JSONSerialization.data(withJSONObject: object, options: options) {
            Swift.print(String(decoding: data, as: UTF8.self))
        }
    }
}

/// Runs `body`, turning a CLIError into a message on stderr and its exit code.
func runReportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as CLIError {
        FileHandle.standardError.write(Data("stepsign: \(error.description)\n".utf8))
        throw ExitCode(error.exitCode)
    }
}
