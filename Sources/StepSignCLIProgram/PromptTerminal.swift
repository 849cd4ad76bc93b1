#if canImport(Glibc)
import Glibc
#endif

/// Where a person is asked: the controlling terminal (`/dev/tty`), whatever standard input
/// and output are; else standard input when it is a terminal, the prompt on standard error
/// if that is one too (as Python's `getpass` does). The second is for a command run by
/// `su - alice -c '…'`, which starts it in a session of its own with no controlling
/// terminal while the terminal is still its standard input (issue 39).
struct PromptTerminal {
    /// The descriptor answers are read from (and whose echo is turned off).
    let input: Int32
    /// The descriptor prompts are written to.
    let output: Int32
    /// Whether `input` was opened here (and is closed by ``close()``).
    let owned: Bool

    /// The terminal to ask on, or nil when there is none.
    static func open() -> PromptTerminal? {
        let tty = Glibc.open("/dev/tty", O_RDWR | O_CLOEXEC)
        if tty >= 0 { return PromptTerminal(input: tty, output: tty, owned: true) }
        guard isatty(0) == 1 else { return nil }
        return PromptTerminal(input: 0, output: isatty(2) == 1 ? 2 : 0, owned: false)
    }

    /// Closes `/dev/tty` if it was opened (never standard input).
    func close() {
        if owned { _ = Glibc.close(input) }
    }

    /// Writes `prompt`, then reads up to the end of the line.
    func line(prompt: String) -> String {
        var promptBytes = Array(prompt.utf8)
        _ = promptBytes.withUnsafeMutableBytes { write(output, $0.baseAddress, $0.count) }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while Glibc.read(input, &byte, 1) == 1, byte != 0x0A {
            line.append(byte)
        }
        if line.last == 0x0D { line.removeLast() }
        return String(decoding: line, as: UTF8.self)
    }
}
