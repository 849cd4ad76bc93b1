import Foundation
import Logging
@testable import StepSignEngine
import StepSignConfig
import StepSignStorage

/// An engine on a real SQLite store and keyring in a fresh temp directory, with cheap scrypt
/// (`scrypt_n = 1024`) and whatever `configure` changes.
func makeTestEngine(_ prefix: String, configure: (inout StepSignConfiguration) -> Void = { _ in }) async throws
    -> (engine: Engine, directory: String)
{
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
    var config = StepSignConfiguration.default
    config.password.scryptN = 1024
    config.server.stateDir = directory
    configure(&config)
    let store = try SQLiteStore.open(stateDirectory: directory)
    let logger = Logger(label: "test")
    let keyring = try await Keyring.open(directory: directory + "/keys", passphrase: nil, store: store, logger: logger)
    return (try Engine(configuration: config, store: store, keyring: keyring, logger: logger), directory)
}
