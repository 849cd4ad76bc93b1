import Foundation

/// Reading the files and streams stepsign-verify is given. Failures are bad input (exit 2).
enum InputFiles {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The bytes of `path`, or of stdin for "-".
    static func bytes(_ path: String) throws(Failure) -> Data {
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(description: "cannot read \(path)")
        }
        return data
    }

    /// The UTF-8 text of `path`, or of stdin for "-".
    static func text(_ path: String) throws(Failure) -> String {
        guard let text = String(validating: try bytes(path), as: UTF8.self) else {
            throw Failure(description: "\(path == "-" ? "stdin" : path) is not UTF-8 text")
        }
        return text
    }
}
