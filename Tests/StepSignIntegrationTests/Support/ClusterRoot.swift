import Foundation
import StepSignTestSupport

/// An operator's cluster root key for a test (SPEC §5.4), made and used with the real CLI:
/// `stepsign admin cluster root-key new`, then `stepsign admin cluster endorse` for each
/// daemon's key, as docs/scale-out.md tells an operator to.
final class ClusterRoot: @unchecked Sendable {
    let directory: TemporaryDirectory
    /// The private key (0600).
    let privateKeyPath: String
    /// The public key (0644), named by `[cluster] root_key`.
    let publicKeyPath: String

    init() throws {
        directory = try TemporaryDirectory("cluster-root", mode: 0o755)
        privateKeyPath = directory.appending("root.pem")
        publicKeyPath = directory.appending("root.pub")
        let made = try Tools.run([Binaries.path("stepsign"), "admin", "cluster", "root-key", "new", "--out", privateKeyPath])
        guard made.status == 0 else { throw Tools.Failure(result: made) }
        try made.stdout.write(toFile: publicKeyPath, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: publicKeyPath)
    }

    /// The config lines that make a daemon trust keys endorsed by this root.
    var config: String { "[cluster]\nroot_key = \"\(publicKeyPath)\"\n" }

    /// Endorses `daemon`'s active key (its kid from its own `status`), through `via`'s socket.
    @discardableResult
    func endorse(_ daemon: DaemonHarness, instance: String, via: DaemonHarness? = nil) throws -> Tools.Result {
        let kid = try daemon.connect().call("status").result?["activeKid"]?.stringValue ?? ""
        return try endorse(kid: kid, instance: instance, via: via ?? daemon)
    }

    /// Endorses each daemon's active key as the instance named beside it; throws on a refusal.
    func endorse(_ daemons: [(DaemonHarness, String)]) throws {
        for (daemon, instance) in daemons {
            let endorsed = try endorse(daemon, instance: instance)
            guard endorsed.status == 0 else { throw Tools.Failure(result: endorsed) }
        }
    }

    /// Endorses the key `kid` of `instance` through `via`'s socket.
    func endorse(kid: String, instance: String, via: DaemonHarness) throws -> Tools.Result {
        try Tools.run([Binaries.path("stepsign"), "--socket", via.socketPath, "admin", "cluster", "endorse",
                       "--root-key", privateKeyPath, "--instance", instance, "--kid", kid])
    }

    deinit {
        directory.remove()
    }
}
