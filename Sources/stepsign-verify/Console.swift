import Foundation

/// Where stepsign-verify writes: results to stdout, errors to stderr.
enum Console {
    static func out(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func error(_ line: String) {
        FileHandle.standardError.write(Data(("stepsign-verify: " + line + "\n").utf8))
    }

    /// One JSON object on one line.
    static func json(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else {
            error("could not encode the JSON report")
            return
        }
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
}
