#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import StepSignFormat

/// `--log-key VKEY …`: the note verifier keys trusted to sign the log's C2SP checkpoints
/// (SPEC §5.5), as `getPublicKeys.logKeys` and `stepsign keys export --log-keys` give them.
struct LogKeyOptions: ParsableArguments {
    @Option(name: .customLong("log-key"), help: ArgumentHelp(
        "A log key trusted to sign checkpoints (name+hex8+base64, as stepsign keys export --log-keys prints them), or a file of them, one a line; repeat for several. A key counts only for the checkpoints of the origin it is named after.",
        valueName: "vkey"))
    var values: [String] = []

    /// The keys, or a failure (bad input) naming the value that is neither a key nor a file of them.
    func load() throws(InputFiles.Failure) -> [NoteVerifierKey] {
        var keys: [NoteVerifierKey] = []
        for value in values { keys += try Self.keys(value) }
        return keys
    }

    /// The key `value` spells, or the keys of the file it names (`option` names it in messages).
    static func keys(_ value: String, option: String = "--log-key") throws(InputFiles.Failure) -> [NoteVerifierKey] {
        if let key = try? NoteVerifierKey(value) { return [key] }
        guard access(value, R_OK) == 0 else {
            throw InputFiles.Failure(description: "\(option) \(value): neither a note verifier key (name+hex8+base64) nor a readable file")
        }
        let lines = try InputFiles.text(value).split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        var keys: [NoteVerifierKey] = []
        for line in lines where !line.isEmpty && !line.hasPrefix("#") {
            do {
                keys.append(try NoteVerifierKey(line))
            } catch {
                throw InputFiles.Failure(description: "\(value): \"\(line.prefix(80))\" is not a note verifier key: \(error)")
            }
        }
        guard !keys.isEmpty else { throw InputFiles.Failure(description: "\(value) holds no log key") }
        return keys
    }
}
