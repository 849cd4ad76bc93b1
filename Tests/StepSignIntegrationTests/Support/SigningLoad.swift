import Foundation
import StepSignClient
import Synchronization

/// Level-0 signings from several connections to several daemons, one thread per connection,
/// until ``stop()``: every reply is recorded with how long it took, for the fault tests.
final class SigningLoad: @unchecked Sendable {
    /// One reply (or a transport failure: no reply at all).
    struct Outcome: Sendable {
        var daemon: Int
        var started: Date
        var seconds: Double
        var code: Int
        var message: String
        var signatureID: String?
        var jws: String?
        /// Set when the call threw (timeout, connection closed): no reply.
        var transportError: String?
    }

    private let sockets: [String]
    private let connectionsPerDaemon: Int
    private let running = Atomic<Bool>(true)
    private let recorded = Mutex<[Outcome]>([])
    private let group = DispatchGroup()
    /// The longest a reply may take before the call gives up (a failure of the test).
    let replyTimeout: Double

    init(sockets: [String], connectionsPerDaemon: Int = 3, replyTimeout: Double = 60) {
        self.sockets = sockets
        self.connectionsPerDaemon = connectionsPerDaemon
        self.replyTimeout = replyTimeout
    }

    var outcomes: [Outcome] { recorded.withLock { $0 } }

    func start() {
        for (daemon, socket) in sockets.enumerated() {
            for worker in 0..<connectionsPerDaemon {
                group.enter()
                Thread.detachNewThread { [self] in
                    defer { group.leave() }
                    run(daemon: daemon, socket: socket, worker: worker)
                }
            }
        }
    }

    /// Ends the load and waits for every thread's last reply.
    func stop() {
        running.store(false, ordering: .relaxed)
        group.wait()
    }

    private func run(daemon: Int, socket: String, worker: Int) {
        var connection: StepSignConnection?
        var index = 0
        while running.load(ordering: .relaxed) {
            index += 1
            let started = Date()
            do {
                if connection == nil { connection = try StepSignConnection(socketPath: socket) }
                let reply = try connection!.call("authenticateUserAndSignData", [
                    "user": DaemonHarness.user, "payload": "load \(daemon)-\(worker)-\(index)", "reason": "fault test",
                    "authLevel": 0, "authenticatorType": 0,
                ], timeout: replyTimeout)
                let details = reply.event("onAuthenticateUserAndSignData")?["details"]
                recorded.withLock {
                    $0.append(Outcome(daemon: daemon, started: started, seconds: Date().timeIntervalSince(started),
                                      code: reply.code, message: reply.message,
                                      signatureID: details?["dataSignatureID"]?.stringValue,
                                      jws: details?["payloadSignature"]?.stringValue))
                }
            } catch {
                connection = nil
                recorded.withLock {
                    $0.append(Outcome(daemon: daemon, started: started, seconds: Date().timeIntervalSince(started),
                                      code: -1, message: "", transportError: "\(error)"))
                }
                usleep(100_000)
            }
        }
    }
}

extension StepSignConnection {
    /// The whole ledger through `admin.exportLedger`: signature ID → (seq, JWS).
    func ledgerBySignatureID() throws -> [String: (seq: Int, jws: String)] {
        try ledgerSignaturesAndEntryCount().signatures
    }

    /// The ledger's signatures by ID (events, SPEC §5.4, left out) and how many entries it
    /// holds in all (what an audit walks).
    func ledgerSignaturesAndEntryCount() throws -> (signatures: [String: (seq: Int, jws: String)], entries: Int) {
        var table: [String: (seq: Int, jws: String)] = [:]
        var after = 0
        while true {
            let entries = try call("admin.exportLedger", ["afterSeq": after, "limit": 10_000]).result?["entries"]?.arrayValue ?? []
            for entry in entries {
                let seq = entry["seq"]?.int ?? -1
                if entry["kind"]?.stringValue == "signature" {
                    table[entry["signatureID"]?.stringValue ?? ""] = (seq, entry["payloadSignature"]?.stringValue ?? "")
                }
                after = max(after, seq)
            }
            if entries.count < 10_000 { return (table, after) }
        }
    }
}
