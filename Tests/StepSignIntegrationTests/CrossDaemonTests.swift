import Foundation
import StepSignProtocol
import StepSignClient
import StepSignCrypto
import StepSignTestSupport
import Synchronization
import Testing

/// Issue 14's cross-daemon semantics that only two daemons can show (SPEC §5.2): two real
/// `stepsignd` processes, "host-a" and "host-b", on one real PostgreSQL database. (Logins
/// ending on credential events and the #7 attacks run on both deployments in
/// `LoginEndTests` and `ConcurrentAnswersTests`.)
@Suite("Cross-daemon semantics", .blocking, .enabled(if: PostgresServer.enabled))
struct CrossDaemonTests {
    /// Part `index` (0 header, 1 claims) of a compact JWS, as a JSON object.
    static func part(_ index: Int, of jws: String) throws -> JSONValue {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        let bytes = try #require(Base64URL.decode(String(parts[index])))
        return try JSONParser.parse(Array(bytes))
    }

    static func claims(_ jws: String) throws -> JSONValue { try part(1, of: jws) }
    static func header(_ jws: String) throws -> JSONValue { try part(0, of: jws) }

    @Test("signings on both daemons at once make one chain; auditVerify and getSignature on either see all of it; a changed row of B's is found by A")
    func oneChainAuditedFromEither() throws {
        let cluster = try Deployment.postgres.start(config: "[ledger]\ncheckpoint_entries = 10")
        let database = try #require(cluster.database)
        let perWorker = 5
        let workers = 8
        let signed = Mutex<[String: String]>([:])  // signature ID → JWS
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            do {
                let connection = try cluster.connect(worker)
                for index in 0..<perWorker {
                    let reply = try connection.call("authenticateUserAndSignData", [
                        "user": "alice", "payload": "w\(worker)-\(index)", "reason": "r", "authLevel": 0, "authenticatorType": 0,
                    ])
                    let details = reply.event("onAuthenticateUserAndSignData")?["details"]
                    if let id = details?["dataSignatureID"]?.stringValue, let jws = details?["payloadSignature"]?.stringValue {
                        signed.withLock { $0[id] = jws }
                    } else {
                        failures.withLock { $0.append("\(reply.code) \(reply.message) \(reply.shape)") }
                    }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let all = signed.withLock { $0 }
        let total = workers * perWorker
        #expect(all.count == total)

        // Both daemons' entries are in the one chain: `iss` is the instance that signed.
        let exported = try #require(try cluster.a.connect().call("admin.exportLedger").result)
        let entries = try #require(exported["entries"]?.arrayValue)
        #expect(entries.compactMap { $0["seq"]?.int } == Array(1...entries.count))
        let signatures = entries.filter { $0["kind"]?.stringValue == "signature" }
        #expect(signatures.count == total)
        var issuers: [String: Int] = [:]
        var kids: [String: Set<String>] = [:]  // iss → the kids of its entries
        for entry in signatures {
            let jws = try #require(entry["payloadSignature"]?.stringValue)
            let issuer = try Self.claims(jws)["iss"]?.stringValue ?? "?"
            issuers[issuer, default: 0] += 1
            kids[issuer, default: []].insert(try #require(try Self.header(jws)["kid"]?.stringValue))
        }
        #expect(issuers == ["host-a": total / 2, "host-b": total / 2], "\(issuers)")
        // Each daemon signed with its own key (SPEC §5.2).
        for (instance, daemon) in [("host-a", cluster.a), ("host-b", cluster.b)] {
            let active = try #require(try daemon.connect().call("status").result?["activeKid"]?.stringValue)
            #expect(kids[instance] == [active], "\(kids)")
        }
        let exportedOnB = try #require(try cluster.b.connect().call("admin.exportLedger").result)
        #expect((exportedOnB["entries"]?.arrayValue)?.compactMap { $0["entryHash"]?.stringValue }
            == entries.compactMap { $0["entryHash"]?.stringValue })
        #expect((exportedOnB["checkpoints"]?.arrayValue?.compactMap(\.stringValue))?.count == (exported["checkpoints"]?.arrayValue?.compactMap(\.stringValue))?.count)

        // Either daemon checks the whole chain, and finds every signature, whoever made it.
        for daemon in cluster.daemons {
            let connection = try daemon.connect()
            let audit = try #require(try connection.call("admin.auditVerify").result)
            #expect(audit["ok"]?.boolValue == true, "\(audit)")
            #expect(audit["entries"]?.int == entries.count)
            #expect(audit["checkpoints"]?.int ?? 0 >= total / 10, "\(audit)")
            #expect(try connection.call("status").result?["signatures"]?.int == total)
            for (id, jws) in all {
                let row = try #require(try connection.call("getSignature", ["signatureID": id]).result, "\(id)")
                #expect(row["payloadSignature"]?.stringValue == jws)
                #expect(row["signatureID"]?.stringValue == id)
            }
        }

        // The offline verifier agrees on the export of either daemon.
        for daemon in cluster.daemons {
            let (export, jwks) = try daemon.exportLedgerAndKeys()
            let path = daemon.directory.appendingPathComponent("ledger.jsonl").path
            try export.stdout.write(toFile: path, atomically: true, encoding: .utf8)
            let verified = try Tools.run([Binaries.path("stepsign-verify"), "ledger", path, "--keys", jwks])
            #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
        }

        // A row B wrote, changed behind the daemons' backs (the superuser lifts the
        // append-only triggers), is reported by A's audit at its seq.
        let victim = try #require(entries.first { entry in
            (entry["payloadSignature"]?.stringValue).flatMap { try? Self.claims($0)["iss"]?.stringValue } == "host-b"
        })
        let victimSeq = try #require(victim["seq"]?.int)
        try database.execute("""
            BEGIN; ALTER TABLE ledger DISABLE TRIGGER USER;
            UPDATE ledger SET user_name = 'mallory' WHERE seq = \(victimSeq);
            ALTER TABLE ledger ENABLE TRIGGER USER; COMMIT;
            """)
        for daemon in cluster.daemons {
            let audit = try #require(try daemon.connect().call("admin.auditVerify").result)
            #expect(audit["ok"]?.boolValue == false, "\(audit)")
            #expect(audit["firstBadSeq"]?.int == victimSeq, "\(audit)")
        }
    }
}
