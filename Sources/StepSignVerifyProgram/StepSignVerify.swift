import ArgumentParser
import StepSignVersion

/// The root command: `stepsign-verify [verify] …` (the default) and `stepsign-verify ledger …`.
struct StepSignVerify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stepsign-verify",
        abstract: "Verify stepsign signatures and exported ledgers offline, with trusted public keys only.",
        discussion: """
            Output: prose by default; --json prints one object for scripts, every field present \
            (null where there is nothing to say), with the field names of stepsign and stepsignd.

            Exit status: 0 valid; 1 invalid or mismatched (bad signature, alg other than ES256, \
            unknown kid, payload or user mismatch, broken ledger); 2 usage error or bad input \
            (an unknown or conflicting option, an unreadable file, not a JWS, a bad keys file). \
            stepsign uses the same three.
            """,
        version: StepSignVersion.current,
        subcommands: [VerifyCommand.self, LedgerCommand.self, LogCommand.self],
        defaultSubcommand: VerifyCommand.self
    )
}
