import Foundation
import StepSignTestSupport
import Testing

extension DaemonHarness {
    /// The ledger as `stepsign admin audit export` prints it, and the path of the daemon's keys
    /// as `stepsign keys export --jwks` wrote them (beside the daemon's state): what an auditor
    /// takes away to run `stepsign-verify ledger`.
    func exportLedgerAndKeys(_ exportArguments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) throws
        -> (export: Tools.Result, jwks: String)
    {
        let environment = ["STEPSIGN_SOCKET": socketPath]
        let exported = try Tools.run([Binaries.path("stepsign"), "admin", "audit", "export"] + exportArguments,
                                     environment: environment)
        try #require(exported.status == 0, "\(exported.stderr)", sourceLocation: sourceLocation)
        let keys = try Tools.run([Binaries.path("stepsign"), "keys", "export", "--jwks"], environment: environment)
        try #require(keys.status == 0, "\(keys.stderr)", sourceLocation: sourceLocation)
        let jwks = directory.appendingPathComponent("jwks.json").path
        try keys.stdout.write(toFile: jwks, atomically: true, encoding: .utf8)
        return (exported, jwks)
    }
}
