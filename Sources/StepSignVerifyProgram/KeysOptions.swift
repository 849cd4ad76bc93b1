import ArgumentParser
import Foundation
import StepSignCrypto

/// `--keys FILE`: the trusted public keys, a PEM bundle or a JWKS. When absent,
/// `$STEPSIGN_KEYS` names the file; with neither, it is a usage error (exit 2).
struct KeysOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Trusted public keys: a PEM bundle or a JWKS (default: $STEPSIGN_KEYS).", valueName: "file"))
    var keys: String?

    /// The trusted keys, or a message for stderr.
    func load() throws(InputFiles.Failure) -> TrustedKeys {
        guard let path = keys ?? ProcessInfo.processInfo.environment["STEPSIGN_KEYS"], !path.isEmpty else {
            throw InputFiles.Failure(description: "no keys: give --keys FILE or set STEPSIGN_KEYS")
        }
        let text = try InputFiles.text(path)
        do {
            return try TrustedKeys(parsing: text)
        } catch {
            throw InputFiles.Failure(description: "\(path): \(error)")
        }
    }
}
