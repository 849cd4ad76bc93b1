#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Where the CLI gets a password: a file, a file descriptor, or the terminal without echo.
///
/// A password never comes from argv, where other users can read it in the process list.
struct PasswordReader {
    var file: String?
    var descriptor: Int32?

    /// Whether answers come from a script (a file or descriptor) rather than a person.
    var isScripted: Bool { file != nil || descriptor != nil }

    /// Reads one password, prompting with `prompt` on the terminal if needed.
    func read(prompt: String) throws -> String {
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw CLIError("cannot read password file \(file)", exitCode: 2)
            }
            return Self.firstLine(data)
        }
        if let descriptor {
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
            return Self.firstLine(handle.readDataToEndOfFile())
        }
        return try Self.readFromTerminal(prompt: prompt)
    }

    private static func firstLine(_ data: Data) -> String {
        let text = String(decoding: data, as: UTF8.self)
        return String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
    }

    /// Prompts on /dev/tty and reads a line with echo turned off.
    static func readFromTerminal(prompt: String) throws -> String {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else {
            throw CLIError("no terminal to ask for a password; use --password-file or --password-fd", exitCode: 2)
        }
        defer { close(tty) }
        var saved = termios()
        let hasTermios = tcgetattr(tty, &saved) == 0
        if hasTermios {
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            silent.c_lflag |= tcflag_t(ECHONL)
            tcsetattr(tty, TCSAFLUSH, &silent)
        }
        defer { if hasTermios { tcsetattr(tty, TCSAFLUSH, &saved) } }
        var promptBytes = Array(prompt.utf8)
        _ = promptBytes.withUnsafeMutableBytes { write(tty, $0.baseAddress, $0.count) }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while Glibc.read(tty, &byte, 1) == 1, byte != 0x0A {
            line.append(byte)
        }
        if line.last == 0x0D { line.removeLast() }
        return String(decoding: line, as: UTF8.self)
    }
}
