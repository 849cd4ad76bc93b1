import ArgumentParser
import StepSignFormat

/// `stepsign proof SIGNATURE_ID [-o FILE] [--tree-size N]`: the C2SP tlog-proof that a
/// signature is in the log (SPEC §5.5), for `stepsign-verify --proof`.
struct ProofCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proof",
        abstract: "Write the proof that a signature is in the log (a C2SP tlog-proof).",
        discussion: """
            Asks stepsignd for the inclusion proof of the signature with this ID, against a \
            checkpoint it signs, and writes it as a c2sp.org/tlog-proof@v1 file. The daemon \
            answers the uid that asked for the signature, and admins. Check it offline with \
            stepsign-verify JWS --proof FILE --log-key VKEY (stepsign keys export --log-keys).
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The signature ID (the JWS's jti).") var signatureID: String
    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp("Write the proof to this file (default: stdout).", valueName: "file"))
    var output: String = "-"
    @Option(name: .customLong("tree-size"), help: ArgumentHelp("Prove inclusion in the log's first N entries (default: the whole log).", valueName: "n"))
    var treeSize: Int64?

    func validate() throws {
        if let treeSize, treeSize < 1 { throw ValidationError("--tree-size must be 1 or more") }
    }

    func run() throws {
        try runReportingErrors {
            let proof = try ProofFile.fetch(signatureID, treeSize: treeSize, on: global.connect())
            try ProofFile.write(proof, to: output)
        }
    }
}
