#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StepSignCrypto
import StepSignSystem

/// Reading the files and streams stepsign-verify is given. Failures are bad input (exit 2).
///
/// Every input is read only up to its limit: a JWS, a keys file, a payload file and a
/// checkpoint file hold at most ``maximumSize`` bytes, and one byte more is refused without
/// reading on, so an endless or huge stdin costs at most that much memory and time. An
/// exported ledger is read line by line, each line bounded (``LineReader``).
enum InputFiles {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The most read from one input: the longest JWS the verifier accepts (1 MiB).
    static let maximumSize = JWS.maximumLength

    /// The bytes of `path`, or of stdin for "-"; more than ``maximumSize`` is refused.
    static func bytes(_ path: String) throws(Failure) -> Data {
        try withDescriptor(path) { (descriptor: Int32) throws(Failure) -> Data in
            var data = Data()
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                // Never more than one byte past the limit.
                let wanted = min(chunk.count, maximumSize + 1 - data.count)
                let count = retryingOnEINTR { chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, wanted) } }
                guard count >= 0 else { throw Failure(description: "cannot read \(name(path)): \(String(cString: strerror(errno)))") }
                if count == 0 { return data }
                data.append(contentsOf: chunk[..<count])
                guard data.count <= maximumSize else {
                    throw Failure(description: "\(name(path)) is larger than \(maximumSize >> 20) MiB; refused")
                }
            }
        }
    }

    /// The UTF-8 text of `path`, or of stdin for "-"; more than ``maximumSize`` bytes is refused.
    static func text(_ path: String) throws(Failure) -> String {
        guard let text = String(validating: try bytes(path), as: UTF8.self) else {
            throw Failure(description: "\(name(path)) is not UTF-8 text")
        }
        return text
    }

    /// Calls `body` with a descriptor open on `path` (stdin for "-"), closed afterwards.
    static func withDescriptor<T>(_ path: String, _ body: (Int32) throws(Failure) -> T) throws(Failure) -> T {
        if path == "-" { return try body(STDIN_FILENO) }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Failure(description: "cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        return try body(descriptor)
    }

    /// How messages name `path`: "stdin" for "-".
    static func name(_ path: String) -> String {
        path == "-" ? "stdin" : path
    }
}
