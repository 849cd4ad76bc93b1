// stepsign-verify: offline verification of stepsign signatures and exported ledgers (SPEC §8).
//
// Exit codes: 0 valid, 1 invalid or mismatched, 2 bad input — including bad usage, which
// ArgumentParser would otherwise report with 64, so parsing is run here by hand.
import ArgumentParser
import Foundation

do {
    var command = try StepSignVerify.parseAsRoot()
    // `log` reads over HTTP, so it is async. Called on its own type: through the existential
    // `any AsyncParsableCommand`, this top-level code picked the synchronous default `run()`
    // (which prints the help) over the command's async one.
    if let log = command as? LogCommand {
        try await log.run()
    } else {
        try command.run()
    }
} catch let exitCode as ExitCode {
    StepSignVerify.exit(withError: exitCode)
} catch {
    if StepSignVerify.exitCode(for: error) == .success {
        StepSignVerify.exit(withError: error) // --help, --version
    }
    Console.error(StepSignVerify.fullMessage(for: error))
    exit(ExitStatus.badInput.rawValue)
}
