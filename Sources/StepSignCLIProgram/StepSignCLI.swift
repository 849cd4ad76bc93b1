import ArgumentParser
import StepSignProtocol
import Foundation
import StepSignClient
import StepSignVersion

/// `stepsign`: the client and admin CLI (SPEC §8).
struct StepSignCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stepsign",
        abstract: "Ask stepsignd to sign, and administer it.",
        discussion: """
            Output: prose for people by default; --json, where a command prints data, for \
            scripts (the daemon's field names, absent values as null). Secrets never come from \
            argv: each --*-file option takes a file or - for stdin (one line per secret), each \
            --*-fd option a descriptor, and otherwise the terminal is asked, without echo. A \
            secret file (a password, a code, a --device-key) that group or others may read or \
            write is refused, as ssh refuses a private key: chmod 600 it.

            Exit status: 0 done; 1 refused or failed (the daemon said no, the ledger does not \
            verify, the daemon cannot be reached); 2 usage error or bad input (an unknown or \
            conflicting option, an unreadable file, no terminal to ask on). stepsign-verify \
            uses the same three.
            """,
        version: StepSignVersion.current,
        subcommands: [SignCommand.self, LoginCommand.self, PasswdCommand.self, ForgotPasswordCommand.self,
                      DeviceCommand.self, StatusCommand.self, KeysCommand.self, ProofCommand.self, MonitorCommand.self,
                      ApprovalsCommand.self, ApproveCommand.self, DenyCommand.self, UnlockCommand.self, LockCommand.self,
                      AdminCommand.self]
    )

    @OptionGroup var global: GlobalOptions

    /// Parses and runs like ArgumentParser's own `main()`, except that a usage error exits 2,
    /// as in stepsign-verify (SPEC §8), rather than 64.
    static func main() async {
        do {
            var command = try parseAsRoot()
            // `monitor` reads over HTTP, so it is async; called on its own type (through the
            // existential, the synchronous default `run()`, which prints the help, was chosen).
            if let monitor = command as? MonitorCommand {
                try await monitor.run()
                return
            }
            try command.run()
        } catch {
            guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
            FileHandle.standardError.write(Data("\(fullMessage(for: error))\n".utf8))
            exit(withError: ExitCode(CLIError.usage))
        }
    }
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
        } catch ClientError.system(let call, let code) where code == EACCES || code == EPERM {
            // The socket is 0660 root:stepsign: a user not (yet) in the group gets only EACCES.
            throw CLIError("cannot reach stepsignd at \(socketPath): \(ClientError.system(call, code)); "
                + "not in group stepsign? Ask for `usermod -aG stepsign $USER`, then log in again (a new login session)")
        } catch {
            throw CLIError("cannot reach stepsignd at \(socketPath): \(error)")
        }
    }
}

/// A failure the CLI reports on stderr before exiting with `exitCode`.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    var exitCode: Int32

    /// The exit status of a usage error or bad input (2), shared with stepsign-verify.
    static let usage: Int32 = 2

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
///
/// One line, every object's members sorted by name (as before, when Foundation wrote it), with
/// the protocol's writer.
enum JSONOutput {
    static func print(_ value: JSONValue) {
        Swift.print(value.sortingKeys.jsonText)
    }

    /// `object` with every one of `fields` present, absent ones as null: a script reads the
    /// same fields whatever the daemon left out.
    static func withFields(_ object: JSONValue, _ fields: [String]) -> JSONValue {
        var members = object.members ?? []
        for field in fields where !members.contains(where: { $0.0 == field }) { members.append((field, .null)) }
        return .object(members)
    }

    /// `object` with exactly `fields`, absent ones as null.
    static func only(_ object: JSONValue, _ fields: [String]) -> JSONValue {
        .object(fields.map { field in (field, object[field] ?? .null) })
    }
}

/// Runs `body`, turning a CLIError into a message on stderr and its exit code.
func runReportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as CLIError {
        FileHandle.standardError.write(Data("stepsign: \(error.description)\n".utf8))
        throw ExitCode(error.exitCode)
    } catch let error as ClientError {
        FileHandle.standardError.write(Data("stepsign: lost the connection to stepsignd: \(error)\n".utf8))
        throw ExitCode(1)
    }
}
