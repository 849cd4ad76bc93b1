#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A real SoftHSM2 token for tests (SPEC §5.7): its own `softhsm2.conf` and token directory in
/// a temporary directory, initialised with `softhsm2-util --init-token`, removed by ``remove()``.
///
/// SoftHSM2 reads `SOFTHSM2_CONF` when the module is initialised, so a process that loads the
/// module itself (not a daemon started with ``environment``) calls ``useInThisProcess()`` first.
public struct SoftHSMToken: Sendable {
    /// Debian's `softhsm2` module.
    public static let modulePath = "/usr/lib/softhsm/libsofthsm2.so"

    public let directory: TemporaryDirectory
    public let label: String
    public let pin: String
    public let soPIN = "0000"
    /// The `softhsm2.conf` of this token.
    public var configPath: String { directory.appending("softhsm2.conf") }
    /// What a child that loads the module needs in its environment.
    public var environment: [String: String] { ["SOFTHSM2_CONF": configPath] }

    /// Makes and initialises a token labelled `label` with user PIN `pin`.
    public init(label: String = "stepsign-test", pin: String = "4711-pin") throws {
        directory = try TemporaryDirectory("softhsm", mode: 0o700)
        self.label = label
        self.pin = pin
        let tokens = directory.appending("tokens")
        try FileManager.default.createDirectory(atPath: tokens, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        try "directories.tokendir = \(tokens)\nobjectstore.backend = file\nlog.level = ERROR\n"
            .write(toFile: configPath, atomically: true, encoding: .utf8)
        let result = try Tools.run(["softhsm2-util", "--init-token", "--free", "--label", label, "--so-pin", soPIN,
                                    "--pin", pin], environment: environment, timeout: 60)
        guard result.status == 0 else {
            directory.remove()
            throw Tools.Failure(result: result)
        }
    }

    /// Points this process's SoftHSM2 at this token's configuration.
    public func useInThisProcess() {
        setenv("SOFTHSM2_CONF", configPath, 1)
    }

    /// `pkcs11-tool --module … --login --list-objects` (OpenSC): every object with its attributes.
    public func listObjects() throws -> String {
        let result = try Tools.run(["pkcs11-tool", "--module", Self.modulePath, "--token-label", label, "--login",
                                    "--pin", pin, "--list-objects"], environment: environment, timeout: 60)
        guard result.status == 0 else { throw Tools.Failure(result: result) }
        return result.stdout
    }

    public func remove() { directory.remove() }
}
