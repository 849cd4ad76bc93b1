import ArgumentParser
import StepSignFormat

/// `--proof FILE --log-key VKEY …`: a C2SP tlog-proof that the signature is in the log, and
/// the note verifier keys trusted to sign the log's checkpoints (SPEC §5.5).
struct ProofOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "A C2SP tlog-proof (from stepsign proof or stepsign sign --proof-out): the signature must be in the log it names, and its log index decides for a revoked key.",
        valueName: "file"))
    var proof: String?

    @OptionGroup var logKeys: LogKeyOptions

    func validate() throws {
        if proof != nil && logKeys.values.isEmpty {
            throw ValidationError("--proof needs at least one --log-key: a proof is only as good as the key its checkpoint is checked with")
        }
        if proof == nil && !logKeys.values.isEmpty {
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
        return (parsed, try logKeys.load())
    }
}
