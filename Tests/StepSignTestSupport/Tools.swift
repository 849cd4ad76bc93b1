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
    }

    /// Runs `arguments[0]` (looked up in PATH) with the rest as arguments.
    public static func run(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        process.environment = env
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Read both pipes before waiting so a large output cannot block the child.
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Runs a Python script with `python3 -c`; extra arguments are `sys.argv[1:]`.
    public static func python(_ script: String, _ arguments: String...) throws -> Result {
        try run(["python3", "-c", script] + arguments)
    }

    /// A new empty temporary directory.
    public static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("stepsign-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs a Python script and returns its stdout; throws `Failure` on a non-zero exit.
    @discardableResult
    public static func checkedPython(_ script: String, _ arguments: String...) throws -> String {
        let result = try run(["python3", "-c", script] + arguments)
        guard result.status == 0 else { throw Failure(result: result) }
        return result.stdout
    }
}
