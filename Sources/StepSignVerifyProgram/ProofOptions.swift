import ArgumentParser
import StepSignFormat

/// `--proof FILE --log-key VKEY … [--witness VKEY … --quorum K]`: a C2SP tlog-proof that the
/// signature is in the log, the note verifier keys trusted to sign the log's checkpoints (SPEC
/// §5.5), and the witnesses of whom K must have cosigned the proof's checkpoint (SPEC §5.6).
struct ProofOptions: ParsableArguments {
    /// What ``load()`` read.
    struct Loaded {
        var proof: TlogProof
        var logKeys: [NoteVerifierKey]
        var witnesses: [NoteVerifierKey]
        /// How many of `witnesses` must have cosigned (0: no witness policy).
        var quorum: Int
    }

    @Option(help: ArgumentHelp(
        "A C2SP tlog-proof (from stepsign proof or stepsign sign --proof-out): the signature must be in the log it names, and its log index decides for a revoked key.",
        valueName: "file"))
    var proof: String?

    @OptionGroup var logKeys: LogKeyOptions

    @Option(name: .customLong("witness"), help: ArgumentHelp(
        "A witness's cosignature key (C2SP vkey of type 0x04), or a file of them, one a line; repeat for several. The proof's checkpoint must carry valid cosignatures of --quorum of them.",
        valueName: "vkey"))
    var witnesses: [String] = []

    @Option(help: ArgumentHelp("How many of the --witness keys must have cosigned the checkpoint (default: all of them).", valueName: "k"))
    var quorum: Int?

    func validate() throws {
        if !witnesses.isEmpty && proof == nil {
            throw ValidationError("--witness is only used with --proof")
        }
        if quorum != nil && witnesses.isEmpty {
            throw ValidationError("--quorum needs --witness keys")
        }
        if let quorum, quorum < 1 {
            throw ValidationError("--quorum must be 1 or more")
        }
        if proof != nil && logKeys.values.isEmpty {
            throw ValidationError("--proof needs at least one --log-key: a proof is only as good as the key its checkpoint is checked with")
        }
        if proof == nil && !logKeys.values.isEmpty {
            throw ValidationError("--log-key is only used with --proof")
        }
    }

    /// The proof, the log keys and the witness policy, or nil without `--proof`; unreadable or
    /// malformed input (a witness key of another type, a quorum above the witnesses given) is a
    /// failure (bad input).
    func load() throws(InputFiles.Failure) -> Loaded? {
        guard let path = proof else { return nil }
        let parsed: TlogProof
        do {
            parsed = try TlogProof(parsing: try InputFiles.text(path))
        } catch let error as InputFiles.Failure {
            throw error
        } catch {
            throw InputFiles.Failure(description: "\(path) is not a tlog-proof: \(error)")
        }
        var witnessKeys: [NoteVerifierKey] = []
        for value in witnesses {
            for key in try LogKeyOptions.keys(value, option: "--witness") {
                guard key.type == .cosignatureV1 else {
                    throw InputFiles.Failure(description: "--witness \(key.name): not a witness's cosignature key (type 0x04)")
                }
                witnessKeys.append(key)
            }
        }
        let needed = witnessKeys.isEmpty ? 0 : quorum ?? witnessKeys.count
        guard needed <= witnessKeys.count else {
            throw InputFiles.Failure(description: "--quorum \(needed) is more than the \(witnessKeys.count) witness keys given")
        }
        return Loaded(proof: parsed, logKeys: try logKeys.load(), witnesses: witnessKeys, quorum: needed)
    }
}
