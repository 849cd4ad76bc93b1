import Foundation
import StepSignClient
import StepSignTestSupport
import Synchronization
import Testing

/// `waitForProof` on the real daemon (SPEC §5.6) where no witness answers: the wait ends with
/// 14 at its timeout, SIGTERM ends a wait of 300 s at once, and a quorum above the configured
/// witnesses, or no witness at all, is refused before anything waits. The proofs themselves,
/// with real witnesses, are `Tests/Interop/test_witnessed_proofs.py`.
@Suite(.blocking) struct WitnessedProofTests {
    static func signLevel0(_ connection: StepSignConnection) throws -> String {
        try #require(try TransparencyLogTests.signLevel0(connection, "witnessed")["dataSignatureID"]?.stringValue)
    }

    @Test("no witness answers: 14 at the timeout; a quorum above the witnesses is 4; without [[witness]] 170")
    func refusals() throws {
        let witness = try WitnessCosignatureTests.Witness("w1.example")
        let daemon = try WitnessCosignatureTests.daemon(witnesses: witness.config)
        let connection = try daemon.connect()
        let id = try Self.signLevel0(connection)
        let start = Date()
        let waited = try connection.call("waitForProof", ["signatureID": id, "timeoutSeconds": 1], timeout: 30)
        #expect(waited.code == 14, "\(waited.message)")
        #expect(Date().timeIntervalSince(start) >= 1)
        #expect(try connection.call("waitForProof", ["signatureID": id, "quorum": 2]).code == 4)
        let plain = try DaemonHarness()
        let other = try plain.connect()
        let otherID = try Self.signLevel0(other)
        #expect(try other.call("waitForProof", ["signatureID": otherID]).code == 170)
    }

    @Test("SIGTERM while a waitForProof waits 300 s: it answers 14 and the daemon exits 0 at once")
    func shutdownEndsAWait() throws {
        let witness = try WitnessCosignatureTests.Witness("w1.example")
        let daemon = try WitnessCosignatureTests.daemon(witnesses: witness.config)
        let id = try Self.signLevel0(try daemon.connect())
        let socketPath = daemon.socketPath
        let answer = Mutex<ClientReply?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let waiter = try? StepSignConnection(socketPath: socketPath)
            let reply = try? waiter?.call("waitForProof", ["signatureID": id, "timeoutSeconds": 300], timeout: 330)
            answer.withLock { $0 = reply }
            done.signal()
        }
        Thread.sleep(forTimeInterval: 0.5)  // the request is read and waiting
        let start = Date()
        #expect(daemon.stop(signal: SIGTERM) == 0)
        let took = Date().timeIntervalSince(start)
        #expect(took < 20, "shutdown waited \(took) s for the waitForProof")
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(answer.withLock { $0 }?.code == 14)
    }
}
