#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StepSignClient
import StepSignProtocol
import Synchronization
import Testing

/// Idempotent retries against the real daemon (SPEC §3): a repeat of a signing request with
/// the same `idempotencyKey` gets the first reply again, across a SIGKILL and restart, with no
/// new step-up and no new ledger entry; other parameters are 4; a repeat while the first is
/// open is 14; duplicates at once make one signature.
@Suite("Idempotent retries", .blocking)
struct IdempotentRetryTests {
    static func request(_ payload: String = "pay 10 EUR to Bob", key: String = "pay-2026-0001", level: Int = 1)
        -> KeyValuePairs<String, any JSONValueConvertible> {
        ["user": "alice", "payload": payload, "reason": "payment", "authLevel": level, "authenticatorType": 0,
         "idempotencyKey": key]
    }

    static func signatures(_ daemon: DaemonHarness) throws -> Int? {
        try daemon.connect().call("status").result?["signatures"]?.int
    }

    @Test("sign, SIGKILL, restart, retry: the same signature, JWS and logIndex, replayed, no step-up, one ledger entry")
    func retryAfterKill() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let before = try #require(try Self.signatures(daemon))
        let connection = try daemon.connect()
        #expect(try connection.call("authenticateUserAndSignData", Self.request()).eventNames == ["getPassword"])
        let signed = try connection.call("setPassword", ["password": DaemonHarness.password, "challengeMode": 12])
        let first = try #require(signed.event("onAuthenticateUserAndSignData")?["details"])
        #expect(first["replayed"] == nil)
        daemon.stop(signal: SIGKILL)
        try daemon.start()

        let retry = try daemon.connect().call("authenticateUserAndSignData", Self.request())
        #expect(retry.code == 0)
        #expect(retry.eventNames == ["onAuthenticateUserAndSignData"])
        #expect(retry.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        let again = try #require(retry.event("onAuthenticateUserAndSignData")?["details"])
        for member in ["dataSignatureID", "payloadSignature", "logIndex", "authenticatorUsed", "dataPayload", "reason"] {
            #expect(again[member] == first[member], "\(member)")
        }
        #expect(again["replayed"]?.boolValue == true)
        #expect(try Self.signatures(daemon) == before + 1)

        // The same key with other parameters: 4, nothing signed.
        let other = try daemon.connect().call("authenticateUserAndSignData", Self.request("pay 11 EUR to Bob"))
        #expect(other.code == 4)
        #expect(other.events.isEmpty)
        // An invalid key: 4.
        for bad in ["", String(repeating: "k", count: 65), "tab\there"] {
            #expect(try daemon.connect().call("authenticateUserAndSignData", Self.request(key: bad)).code == 4)
        }
        #expect(try Self.signatures(daemon) == before + 1)
    }

    @Test("a repeat while the first's challenge is open is 14; once it is cancelled the repeat may go on")
    func repeatWhileOpen() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let first = try daemon.connect()
        #expect(try first.call("authenticateUserAndSignData", Self.request(key: "open-1")).eventNames == ["getPassword"])
        let second = try daemon.connect()
        let busy = try second.call("authenticateUserAndSignData", Self.request(key: "open-1"))
        #expect(busy.code == 14)
        #expect(busy.events.isEmpty)
        #expect(try first.call("resetAuthenticateUserAndSignDataState").code == 0)
        #expect(try second.call("authenticateUserAndSignData", Self.request(key: "open-1")).eventNames == ["getPassword"])
        let signed = try second.call("setPassword", ["password": DaemonHarness.password, "challengeMode": 12])
        #expect(signed.statusCode(of: "onAuthenticateUserAndSignData") == 100)
    }

    @Test("a connection closed with its challenge open gives its key up")
    func closedConnectionGivesTheKeyUp() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        do {
            let first = try daemon.connect()
            #expect(try first.call("authenticateUserAndSignData", Self.request(key: "closed-1")).eventNames == ["getPassword"])
        }   // closed here
        // The daemon notices the close at once; give it a moment to give the key up.
        var reply = try daemon.connect().call("authenticateUserAndSignData", Self.request(key: "closed-1"))
        for _ in 0..<50 where reply.code == 14 {
            usleep(100_000)
            reply = try daemon.connect().call("authenticateUserAndSignData", Self.request(key: "closed-1"))
        }
        #expect(reply.code == 0)
        #expect(reply.eventNames == ["getPassword"])
    }

    @Test("duplicates at once on many connections (of two daemons on PostgreSQL): one signature; the others are 14 or its replay",
          arguments: Deployment.available)
    func concurrentDuplicates(deployment: Deployment) throws {
        let cluster = try deployment.start(config: "")
        let before = try #require(try Self.signatures(cluster.a))
        let count = 12
        let results = Mutex<[ClientReply]>([])
        let sockets = [cluster.a.socketPath, cluster.b.socketPath]
        DispatchQueue.concurrentPerform(iterations: count) { index in
            if let connection = try? StepSignConnection(socketPath: sockets[index % 2]),
               let reply = try? connection.call("authenticateUserAndSignData", Self.request(key: "burst-1", level: 0)) {
                results.withLock { $0.append(reply) }
            }
        }
        let replies = results.withLock { $0 }
        #expect(replies.count == count)
        let signed = replies.compactMap { $0.event("onAuthenticateUserAndSignData")?["details"] }
        #expect(replies.allSatisfy { $0.code == 0 || $0.code == 14 })
        #expect(Set(signed.compactMap { $0["dataSignatureID"]?.stringValue }).count == 1)
        #expect(signed.filter { $0["replayed"]?.boolValue != true }.count == 1)
        #expect(try Self.signatures(cluster.a) == before + 1)
        // The key is shared: a repeat on the other daemon is the replay.
        let repeated = try cluster.b.connect().call("authenticateUserAndSignData", Self.request(key: "burst-1", level: 0))
        #expect(repeated.event("onAuthenticateUserAndSignData")?["details"]?["replayed"]?.boolValue == true)
        #expect(try Self.signatures(cluster.b) == before + 1)
    }

    @Test("a batch retried with its key gets the same batch ID and signatures again")
    func batchReplay() throws {
        let daemon = try DaemonHarness()
        let before = try #require(try Self.signatures(daemon))
        let items: [(String, JSONValue)] = [
            ("items", .array([.object([("payload", .string("a")), ("reason", .string("r1"))]),
                              .object([("payload", .string("b")), ("reason", .string("r2"))])])),
            ("authLevel", .int(0)), ("authenticatorType", .int(0)), ("user", .string("alice")),
            ("idempotencyKey", .string("batch-1")),
        ]
        let first = try #require(try daemon.connect().call("authenticateUserAndSignBatch", items).event("onAuthenticateUserAndSignBatch"))
        let again = try #require(try daemon.connect().call("authenticateUserAndSignBatch", items).event("onAuthenticateUserAndSignBatch"))
        #expect(again["batchID"] == first["batchID"])
        let firstIDs = first["signatures"]?.arrayValue?.compactMap { $0["dataSignatureID"]?.stringValue }
        let againIDs = again["signatures"]?.arrayValue?.compactMap { $0["dataSignatureID"]?.stringValue }
        #expect(firstIDs?.count == 2)
        #expect(againIDs == firstIDs)
        #expect(again["replayed"]?.boolValue == true)
        #expect(try Self.signatures(daemon) == before + 2)
    }
}
