import Foundation
import StepSignProtocol

/// Where stepsign-verify writes: results to stdout, errors to stderr.
enum Console {
    static func out(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func error(_ line: String) {
        FileHandle.standardError.write(Data(("stepsign-verify: " + line + "\n").utf8))
    }

    /// One JSON object on one line, every object's members sorted by name, written by the
    /// protocol's writer.
    static func json(_ value: JSONValue) {
        FileHandle.standardOutput.write(Data((value.sortingKeys.jsonBytes + [UInt8(ascii: "\n")])))
    }
}
