import ArgumentParser
import Foundation

/// The entry point of `stepsign-verify`, offline verification of stepsign signatures and
/// exported ledgers (SPEC §8): its own executable and the name `stepsign-verify` of the
/// multi-call binary (`stepsign-multicall`) call it.
///
/// Exit codes: 0 valid, 1 invalid or mismatched, 2 bad input — including bad usage, which
/// ArgumentParser would otherwise report with 64, so parsing is run here by hand.
public enum StepsignVerifyMain {
    /// Parses `CommandLine.arguments`, runs the check and exits the process with its status.
    public static func main() async -> Never {
        do {
            var command = try StepSignVerify.parseAsRoot()
            // `log` reads over HTTP, so it is async. Called on its own type: through the
            // existential `any AsyncParsableCommand`, the synchronous default `run()` (which
            // prints the help) would be picked over the command's async one.
            if let log = command as? LogCommand {
                try await log.run()
            } else {
                try command.run()
            }
            exit(ExitStatus.valid.rawValue)
        } catch let exitCode as ExitCode {
            StepSignVerify.exit(withError: exitCode)
        } catch {
            if StepSignVerify.exitCode(for: error) == .success {
                StepSignVerify.exit(withError: error) // --help, --version
            }
            Console.error(StepSignVerify.fullMessage(for: error))
            exit(ExitStatus.badInput.rawValue)
        }
    }
}
