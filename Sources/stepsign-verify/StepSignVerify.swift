import ArgumentParser
import StepSignVersion

/// The root command: `stepsign-verify [verify] …` (the default) and `stepsign-verify ledger …`.
struct StepSignVerify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stepsign-verify",
        abstract: "Verify stepsign signatures and exported ledgers offline, with trusted public keys only.",
        discussion: """
            Exit status: 0 valid, 1 invalid or mismatched (bad signature, alg other than ES256, \
            unknown kid, payload or user mismatch, broken ledger), 2 bad input (unreadable file, \
            not a JWS, bad keys file, bad usage).
            """,
        version: StepSignVersion.current,
        subcommands: [VerifyCommand.self, LedgerCommand.self],
        defaultSubcommand: VerifyCommand.self
    )
}
