#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import StepSignFormat

/// `--proof FILE --log-key VKEY …`: a C2SP tlog-proof that the signature is in the log, and
/// the note verifier keys trusted to sign the log's checkpoints (SPEC §5.5).
struct ProofOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "A C2SP tlog-proof (from stepsign proof or stepsign sign --proof-out): the signature must be in the log it names, and its log index decides for a revoked key.",
        valueName: "file"))
    var proof: String?

    @Option(name: .customLong("log-key"), help: ArgumentHelp(
        "A log key trusted to sign checkpoints, as getPublicKeys' logKeys give it (name+hex8+base64), or a file of them, one a line; repeat for several. The key's name must be the checkpoint's origin.",
        valueName: "vkey"))
    var logKeys: [String] = []

    func validate() throws {
        if proof != nil && logKeys.isEmpty {
            throw ValidationError("--proof needs at least one --log-key: a proof is only as good as the key its checkpoint is checked with")
        }
        if proof == nil && !logKeys.isEmpty {
            throw ValidationError("--log-key is only used with --proof")
        }
    }

    /// The proof and the log keys, or nil without `--proof`; unreadable or malformed input is
    /// a failure (bad input).
    func load() throws(InputFiles.Failure) -> (proof: TlogProof, logKeys: [NoteVerifierKey])? {
        guard let path = proof else { return nil }
        let parsed: TlogProof
        do {
            parsed = try TlogProof(parsing: try InputFiles.text(path))
        } catch let error as InputFiles.Failure {
            throw error
        } catch {
            throw InputFiles.Failure(description: "\(path) is not a tlog-proof: \(error)")
        }
        var keys: [NoteVerifierKey] = []
        for value in logKeys {
            keys += try Self.keys(value)
        }
        return (parsed, keys)
    }

    /// The key `value` spells, or the keys of the file it names.
    static func keys(_ value: String) throws(InputFiles.Failure) -> [NoteVerifierKey] {
        if let key = try? NoteVerifierKey(value) { return [key] }
        guard access(value, R_OK) == 0 else {
            throw InputFiles.Failure(description: "--log-key \(value): neither a note verifier key (name+hex8+base64) nor a readable file")
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
