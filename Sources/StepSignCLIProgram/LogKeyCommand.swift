import ArgumentParser
import StepSignProtocol

/// `stepsign admin log-key rotate` (SPEC §2, §8): a new Ed25519 log key for the transparency
/// log's checkpoints. The log key is the log's identity towards witnesses and verifiers, so
/// nothing else rotates it; after this, every note carries both keys' signatures until the log
/// reaches the size printed, the time to give witnesses, monitors and verifiers the new key.
struct LogKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "log-key", abstract: "Manage the transparency log's key.",
                                                    subcommands: [Rotate.self])

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a new log key; both sign every checkpoint for ledger.log_key_overlap_entries entries.",
            discussion: """
                Prints the log's verifier keys (the new one last) and the tree size until which both \
                keys sign; give the new key to every witness (stepsign-witness serve --log), monitor and \
                verifier before the log reaches it. --json prints {logKeys, overlapUntilSize}.
                """)
        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: JSONFlag

        func run() throws {
            try runReportingErrors {
                let reply = try global.connect().call("admin.rotateLogKey").requireAccepted("admin.rotateLogKey")
                let keys = reply.result?["logKeys"]?.arrayValue?.compactMap(\.stringValue) ?? []
                let until = reply.result?["overlapUntilSize"]?.intValue
                if output.json {
                    JSONOutput.print(["logKeys": .array(keys.map { .string($0) }), "overlapUntilSize": until.map { .int($0) } ?? .null])
                } else {
                    for key in keys { print(key) }
                    print("both keys sign every checkpoint until the log has \(until.map(String.init) ?? "?") entries")
                }
            }
        }
    }
}
