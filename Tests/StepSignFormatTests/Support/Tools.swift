import Foundation

/// Runs the external tools the interop tests cross-check against (python3, openssl).
enum Tools {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `arguments[0]` (looked up in PATH) with the rest as arguments.
    static func run(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> Result {
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
    static func python(_ script: String, _ arguments: String...) throws -> Result {
        try run(["python3", "-c", script] + arguments)
    }

    /// A new empty temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("stepsign-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
