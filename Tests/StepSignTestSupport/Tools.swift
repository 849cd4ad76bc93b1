#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Runs the external tools the tests cross-check against (python3, openssl, sqlite3 via Python).
public enum Tools {
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// A tool that exited with a non-zero status.
    public struct Failure: Error, CustomStringConvertible {
        public var result: Result
        public var description: String { "exited with \(result.status): \(result.stdout)\(result.stderr)" }

        public init(result: Result) {
            self.result = result
        }
    }

    /// Runs `arguments[0]` (looked up in PATH) with the rest as arguments, `stdin` as its
    /// input, and waits up to `timeout` seconds for it (then kills it and throws).
    ///
    /// Through ``Subprocess`` (posix_spawn, reaped by us), not Foundation's `Process`, whose
    /// exit is sometimes missed on Linux when many children start and stop at once; the
    /// output goes through files in a private temporary directory, removed afterwards.
    public static func run(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:],
                           timeout: Double = 1800) throws -> Result {
        // Private: stdin may hold a password piped to a CLI.
        let directory = try TemporaryDirectory("run", mode: 0o700)
        defer { directory.remove() }
        let input = directory.appending("stdin")
        let output = directory.appending("stdout")
        let errors = directory.appending("stderr")
        try (stdin ?? "").write(toFile: input, atomically: false, encoding: .utf8)
        let child = try Subprocess(executable: "/usr/bin/env", arguments: arguments, stdin: input, stdout: output,
                                   stderr: errors, environment: environment)
        guard let status = child.wait(timeout: timeout) else {
            child.signal(SIGKILL)
            child.wait(timeout: 10)
            throw Failure(result: Result(status: -1, stdout: "", stderr: "\(arguments[0]) did not exit within \(Int(timeout)) s"))
        }
        return Result(status: status,
                      stdout: (try? String(contentsOfFile: output, encoding: .utf8)) ?? "",
                      stderr: (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")
    }

    /// Runs a Python script with `python3 -c`; extra arguments are `sys.argv[1:]`.
    public static func python(_ script: String, _ arguments: String...) throws -> Result {
        try run(["python3", "-c", script] + arguments)
    }

    /// Runs a Python script and returns its stdout; throws `Failure` on a non-zero exit.
    @discardableResult
    public static func checkedPython(_ script: String, _ arguments: String...) throws -> String {
        let result = try run(["python3", "-c", script] + arguments)
        guard result.status == 0 else { throw Failure(result: result) }
        return result.stdout
    }
}
