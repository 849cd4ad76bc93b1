import Foundation

/// Where `stepsign-verify` takes the JWS from: the argument itself, `@FILE`, a readable file
/// named by the argument, or stdin (`-` or no argument).
///
/// A readable regular file wins over reading the argument as a JWS: a compact JWS is three
/// base64url parts, which no sensible file name is, while a file name typed as a JWS would
/// only fail as "not a JWS". Which one was taken is reported (`source`, `file`).
struct JWSInput {
    /// "argument", "file" or "stdin".
    let source: String
    /// The file read, for source "file".
    let file: String?
    private let argument: String?

    init(argument: String?) {
        self.argument = argument
        guard let argument, argument != "-", argument != "@-" else {
            (source, file) = ("stdin", nil)
            return
        }
        if argument.hasPrefix("@") {
            (source, file) = ("file", String(argument.dropFirst()))
            return
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory), !isDirectory.boolValue,
           FileManager.default.isReadableFile(atPath: argument) {
            (source, file) = ("file", argument)
        } else {
            (source, file) = ("argument", nil)
        }
    }

    /// Whether the argument, taken as a JWS, looks more like a mistyped file name.
    var mayBeMistypedFile: Bool {
        guard source == "argument", let argument else { return false }
        return argument.contains("/") || argument.split(separator: ".", omittingEmptySubsequences: false).count != 3
    }

    /// The JWS, surrounding whitespace removed.
    func read() throws(InputFiles.Failure) -> String {
        let text: String
        switch (source, file) {
        case let ("file", file?): text = try InputFiles.text(file)
        case ("stdin", _): text = try InputFiles.text("-")
        default: text = argument ?? ""
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw InputFiles.Failure(description: "no JWS given") }
        return trimmed
    }
}
