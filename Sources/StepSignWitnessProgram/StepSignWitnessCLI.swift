import ArgumentParser
import StepSignVersion

/// `stepsign-witness serve …` and `stepsign-witness key …` (SPEC §5.6): a C2SP tlog-witness of
/// one's own, for organisations without a public witness network.
struct StepSignWitnessCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stepsign-witness",
        abstract: "A C2SP tlog-witness v1: cosigns a log's checkpoints that extend what it cosigned before.",
        discussion: """
            Exit status: 0 stopped on SIGTERM or SIGINT; 1 a failure while serving (the address \
            cannot be bound); 64 bad usage; 78 a bad state directory, name or log key.
            """,
        version: StepSignVersion.current,
        subcommands: [ServeCommand.self, KeyCommand.self]
    )
}
