import Foundation

/// Runs a Python snippet (real third-party tools: sqlite3, PyJWT, cryptography).
enum Python {
    struct Failure: Error, CustomStringConvertible {
        var status: Int32
        var output: String
        var description: String { "python3 exited with \(status): \(output)" }
    }

    /// Runs `python3 -c code args...`; returns stdout, throws on a non-zero exit.
    @discardableResult
    static func run(_ code: String, _ arguments: String...) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", code] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else { throw Failure(status: process.terminationStatus, output: text) }
        return text
    }
}
