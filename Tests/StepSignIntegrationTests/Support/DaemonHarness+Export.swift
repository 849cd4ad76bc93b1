import Foundation
import StepSignProtocol
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

extension DaemonHarness {
    /// The ledger's entries through `admin.exportLedger`, every page: signatures and the events
    /// of SPEC §5.4 (`kind`), in order.
    func ledgerEntries() throws -> [JSONValue] {
        let connection = try connect()
        var entries: [JSONValue] = []
        while true {
            let page = try connection.call("admin.exportLedger", ["afterSeq": entries.count, "limit": 10_000])
                .result?["entries"]?.arrayValue ?? []
            entries += page
            if page.count < 10_000 { return entries }
        }
    }

    /// How many of the ledger's entries are events (SPEC §5.4), not signatures: what a test
    /// adds to the signatures it made to get the entries an audit walks.
    func ledgerEventCount() throws -> Int {
        try ledgerEntries().filter { $0["kind"]?.stringValue == "event" }.count
    }

    /// The ledger's signature entries only, in order.
    func ledgerSignatures() throws -> [JSONValue] {
        try ledgerEntries().filter { $0["kind"]?.stringValue == "signature" }
    }
}
