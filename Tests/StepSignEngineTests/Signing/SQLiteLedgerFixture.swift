import Foundation
@testable import StepSignEngine
import StepSignFormat
import StepSignStorage
import StepSignTestSupport

/// A real SQLite store in a temporary directory, removed with the fixture, and numbered ledger
/// rows: what the log core's, the frontier's and the ledger writer's tests append to.
final class SQLiteLedgerFixture: Sendable {
    let directory: String
    let store: SQLiteStore

    init(_ name: String) throws {
        directory = TemporaryDirectory.path(name)
        store = try SQLiteStore.open(stateDirectory: directory, seal: try SealKey.stateKey(stateDirectory: directory).seal, sealUnsealed: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Row `index`: its own signature ID and JWS, by `user`.
    static func row(_ index: Int, user: String = "alice") -> LedgerAppend {
        LedgerAppend(signatureID: String(format: "0190a0b0-0000-7000-8000-%012d", index), user: user,
                     iat: 1_750_000_000, kid: "kid-1", jws: "header.claims\(index).sig",
                     peer: LedgerPeer(uid: 1000, pid: 42, comm: "tester"), authLevel: 0)
    }
}
