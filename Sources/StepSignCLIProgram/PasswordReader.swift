#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StepSignSystem

/// Where the CLI gets a secret (a password or an activation code): a file (`-` is stdin), a
/// file descriptor, or the terminal without echo (``PromptTerminal``).
///
/// A secret never comes from argv, where other users can read it in the process list. From
/// stdin or a descriptor one line is read per secret, so one pipe can carry, say, the current
/// and the new password, one per line. A file that group or others may open is refused
/// (``SecretFile``).
struct PasswordReader {
    var file: String?
    var descriptor: Int32?
    /// What is read, for messages ("password", "new password", "activation code").
    var what = "password"
    /// The options that script it, for messages ("--password-file or --password-fd").
    var options = "--password-file or --password-fd"

    /// Whether answers come from a script (a file, stdin or a descriptor) rather than a person.
    var isScripted: Bool { file != nil || descriptor != nil }

    /// Whether this reader takes its secret from stdin.
    var readsStdin: Bool { file == "-" || descriptor == 0 }

    /// Whether this reader can answer: it is scripted, or there is a terminal to ask on.
    var canRead: Bool { isScripted || Self.hasTerminal }

    /// Whether there is a terminal to ask on (``PromptTerminal``).
    static var hasTerminal: Bool {
        guard let terminal = PromptTerminal.open() else { return false }
        terminal.close()
        return true
    }

    /// Reads one secret, prompting with `prompt` on the terminal if needed.
    func read(prompt: String) throws -> String {
        if let file, file != "-" {
            return Self.firstLine(try SecretFile.read(path: file, what: "\(what) file"))
        }
        if let descriptor = file == "-" ? 0 : descriptor {
            guard let line = Self.readLine(from: descriptor) else {
                let source = descriptor == 0 ? "stdin" : "file descriptor \(descriptor)"
                throw CLIError("no \(what) on \(source)", exitCode: 2)
            }
            return line
        }
        guard let answer = try Self.readFromTerminal(prompt: prompt) else {
            throw CLIError("no terminal to ask for the \(what) on; use \(options)", exitCode: 2)
        }
        return answer
    }

    /// Reads a new secret; asked on a terminal, it is asked `again` and must match.
    func readConfirmed(prompt: String, again: String) throws -> String {
        let first = try read(prompt: prompt)
        guard !isScripted else { return first }
        guard try Self.readFromTerminal(prompt: again) == first else {
            throw CLIError("the passwords do not match", exitCode: 2)
        }
        return first
    }

    private static func firstLine(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        return String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
    }

    /// One line from `descriptor`, read a byte at a time so that the next secret's line stays
    /// unread; nil at end of file before any byte.
    private static func readLine(from descriptor: Int32) -> String? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = retryingOnEINTR { Glibc.read(descriptor, &byte, 1) }
            guard count == 1 else {
                if line.isEmpty { return nil }
                break
            }
            if byte == 0x0A { break }
            line.append(byte)
        }
        if line.last == 0x0D { line.removeLast() }
        return String(decoding: line, as: UTF8.self)
    }

    /// Prompts on the terminal and reads a line with echo turned off; nil without a terminal.
    static func readFromTerminal(prompt: String) throws -> String? {
        guard let terminal = PromptTerminal.open() else { return nil }
        defer { terminal.close() }
        var saved = termios()
        let hasTermios = tcgetattr(terminal.input, &saved) == 0
        if hasTermios {
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            silent.c_lflag |= tcflag_t(ECHONL)
            tcsetattr(terminal.input, TCSAFLUSH, &silent)
        }
        defer { if hasTermios { tcsetattr(terminal.input, TCSAFLUSH, &saved) } }
        return terminal.line(prompt: prompt)
    }

    /// Prompts on the terminal and reads a line with echo on (a yes/no or a file name); nil
    /// without a terminal.
    static func askOnTerminal(_ prompt: String) -> String? {
        guard let terminal = PromptTerminal.open() else { return nil }
        defer { terminal.close() }
        return terminal.line(prompt: prompt)
    }
}
