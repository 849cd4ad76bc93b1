import ArgumentParser
import StepSignSystem
import StepSignWitness

/// `stepsign-witness key --state-dir DIR [--name NAME]`: prints the witness's verifier key,
/// making the key (and storing the name) if this is the first use of DIR; while a server runs
/// on DIR it reads them without the server's lock.
struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Print the witness's cosignature verifier key (name+hex8+base64), for [[witness]] key = …"
    )

    @Option(help: "The witness's state directory.")
    var stateDir: String

    @Option(help: "The witness's name (the key name of its cosignatures); needed the first time only.")
    var name: String?

    func run() throws {
        do {
            print(try WitnessStateDirectory.verifierKey(path: stateDir, name: name))
        } catch {
            StandardStreams.error("stepsign-witness: \(error)")
            throw ExitCode(78)
        }
    }
}
