import Foundation
import StepSignProtocol
import StepSignClient
import StepSignTestSupport
import Testing

/// SPEC §5.2: private signing keys never leave their host. Each daemon on a shared database
/// signs with a key of its own, registered with its `instance`; `getPublicKeys` on any daemon
/// publishes every daemon's keys; `admin.rotateKey` rotates the receiving daemon's key;
/// `admin.revokeKey` withdraws any daemon's key everywhere at once.
@Suite("Signing keys per daemon on PostgreSQL", .blocking, .enabled(if: PostgresServer.enabled))
struct SigningKeysPerDaemonTests {
    private static func level0(_ daemon: DaemonHarness, payload: String) throws -> ClientReply {
        try daemon.connect().call("authenticateUserAndSignData", [
            "user": "alice", "payload": payload, "reason": "r", "authLevel": 0, "authenticatorType": 0,
        ])
    }

    private static func signature(_ reply: ClientReply) -> String? {
        (reply.event("onAuthenticateUserAndSignData")?["details"])?["payloadSignature"]?.stringValue
    }

    private static func header(_ jws: String) throws -> JSONValue {
        let part = String(try #require(jws.split(separator: ".").first))
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        let data = try #require(Data(base64Encoded: base64))
        return try JSONParser.parse(Array(data))
    }

    private static func jwks(_ daemon: DaemonHarness) throws -> (text: String, kids: Set<String>) {
        let jwks = try #require(try daemon.connect().call("getPublicKeys").result?["jwks"])
        let kids = Set(((jwks["keys"]?.arrayValue) ?? []).compactMap { $0["kid"]?.stringValue })
        return (jwks.jsonText, kids)
    }

    private static func listKeys(_ daemon: DaemonHarness) throws -> [String: JSONValue] {
        let keys = try #require(try daemon.connect().call("admin.listKeys").result?["keys"]?.arrayValue)
        return Dictionary(uniqueKeysWithValues: keys.compactMap { key in (key["kid"]?.stringValue).map { ($0, key) } })
    }

    private static func activeKid(_ daemon: DaemonHarness) throws -> String {
        try #require(try daemon.connect().call("status").result?["activeKid"]?.stringValue)
    }

    private static func keyFiles(_ daemon: DaemonHarness) throws -> Set<String> {
        // The signing keys; beside them the log key and the last checkpoint (SPEC §5.5).
        Set(try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory + "/keys").filter { $0.hasSuffix(".pem") })
    }

    /// PyJWT, with the JWKS one daemon published, verifies a token another daemon signed.
    private static func pyJWTVerifies(_ token: String, with jwks: String) throws -> String {
        try Tools.checkedPython("""
            import sys, jwt
            jwks = jwt.PyJWKSet.from_json(sys.argv[1])
            token = sys.argv[2]
            kid = jwt.get_unverified_header(token)["kid"]
            key = next(k for k in jwks.keys if k.key_id == kid)
            print(jwt.decode(token, key=key, algorithms=["ES256"])["iss"])
            """, jwks, token)
    }

    /// Two daemons, host-a and host-b, with state directories of their own on a fresh database,
    /// both trusting one cluster root that endorsed each one's first key (SPEC §5.4).
    private static func withTwoDaemons(_ body: (DaemonHarness, DaemonHarness, ClusterRoot) throws -> Void) throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let root = try ClusterRoot()
        let daemons = try Cluster.startTwo(on: database, config: "", root: root)
        try body(daemons[0], daemons[1], root)
    }

    @Test("each daemon makes and keeps its own key; either daemon's JWKS verifies both daemons' signatures (PyJWT)")
    func eachDaemonItsOwnKey() throws {
        try Self.withTwoDaemons { a, b, _ in
            let kidA = try Self.activeKid(a)
            let kidB = try Self.activeKid(b)
            #expect(kidA != kidB)
            // The private halves stay where they were made.
            #expect(try Self.keyFiles(a) == ["\(kidA).pem"])
            #expect(try Self.keyFiles(b) == ["\(kidB).pem"])

            let onA = try #require(Self.signature(try Self.level0(a, payload: "on A")))
            let onB = try #require(Self.signature(try Self.level0(b, payload: "on B")))
            #expect(try Self.header(onA)["kid"]?.stringValue == kidA)
            #expect(try Self.header(onB)["kid"]?.stringValue == kidB)
            let jwksA = try Self.jwks(a)
            let jwksB = try Self.jwks(b)
            #expect(jwksA.kids == [kidA, kidB] && jwksB.kids == [kidA, kidB])
            #expect(try Self.pyJWTVerifies(onB, with: jwksA.text).trimmingCharacters(in: .whitespacesAndNewlines) == "host-b")
            #expect(try Self.pyJWTVerifies(onA, with: jwksB.text).trimmingCharacters(in: .whitespacesAndNewlines) == "host-a")

            // admin.listKeys on either names the instance that holds each key.
            for daemon in [a, b] {
                let keys = try Self.listKeys(daemon)
                #expect(keys[kidA]?["instance"]?.stringValue == "host-a" && keys[kidA]?["active"]?.boolValue == true, "\(keys)")
                #expect(keys[kidB]?["instance"]?.stringValue == "host-b" && keys[kidB]?["active"]?.boolValue == true, "\(keys)")
                let audit = try #require(try daemon.connect().call("admin.auditVerify").result)
                #expect(try audit["ok"]?.boolValue == true && audit["entries"]?.int == (daemon.ledgerEntries().count), "\(audit)")
            }

            // A restart finds the same key.
            #expect(b.stop() == 0)
            try b.start()
            #expect(try Self.activeKid(b) == kidB)
        }
    }

    @Test("admin.rotateKey rotates the receiving daemon's key only; the others publish the new key at once")
    func rotationIsPerDaemon() throws {
        try Self.withTwoDaemons { a, b, _ in
            let kidA = try Self.activeKid(a)
            let oldB = try Self.activeKid(b)
            let newB = try #require(try b.connect().call("admin.rotateKey").result?["activeKid"]?.stringValue)
            #expect(newB != oldB)
            #expect(try Self.activeKid(a) == kidA)

            let keys = try Self.listKeys(a)
            #expect(keys[kidA]?["active"]?.boolValue == true)
            #expect(keys[oldB]?["active"]?.boolValue == false && keys[oldB]?["revoked"]?.boolValue == false)
            #expect(keys[newB]?["active"]?.boolValue == true && keys[newB]?["instance"]?.stringValue == "host-b")
            // B endorsed its successor with its root-endorsed key: A trusts the new key with no operator step.
            #expect(keys[newB]?["trusted"]?.boolValue == true && keys[newB]?["trust"]?.stringValue == "endorsed by \(oldB)", "\(keys)")
            #expect(try Self.jwks(a).kids == [kidA, oldB, newB])
            let signed = try #require(Self.signature(try Self.level0(b, payload: "after rotation")))
            #expect(try Self.header(signed)["kid"]?.stringValue == newB)
            #expect(try Self.pyJWTVerifies(signed, with: try Self.jwks(a).text).contains("host-b"))
        }
    }

    @Test("admin.revokeKey on A of B's active key: gone from every JWKS at once; B refuses to record it and makes a new key, which needs the root")
    func revokingAnotherDaemonsKey() throws {
        try Self.withTwoDaemons { a, b, root in
            let kidA = try Self.activeKid(a)
            let kidB = try Self.activeKid(b)
            let before = try #require(Self.signature(try Self.level0(b, payload: "before")))
            #expect(try Self.header(before)["kid"]?.stringValue == kidB)

            let revoked = try a.connect().call("admin.revokeKey", ["kid": kidB])
            #expect(revoked.code == 0, "\(revoked.code) \(revoked.message)")
            #expect(revoked.result?["activeKid"]?.stringValue == kidA)
            let revokedAt = try #require(revoked.result?["revokedAt"]?.int)
            // Every JWKS keeps kidB, with the index below which its signatures stay valid.
            for daemon in [a, b] {
                let jwks = try #require(try daemon.connect().call("getPublicKeys").result?["jwks"]?["keys"]?.arrayValue)
                #expect(jwks.first { $0["kid"]?.stringValue == kidB }?["stepsign_revoked_at"]?.int == revokedAt, "\(jwks)")
            }

            // B still holds kidB in memory: its next signature with it is refused by the database
            // (15, nothing signed), B makes a new key, and the retry is signed with that.
            var replies: [ClientReply] = []
            var signed: String?
            for attempt in 0..<3 where signed == nil {
                let reply = try Self.level0(b, payload: "after \(attempt)")
                replies.append(reply)
                signed = Self.signature(reply)
            }
            let token = try #require(signed, "\(replies.map { "\($0.code) \($0.message)" })")
            #expect(replies.dropLast().allSatisfy { $0.code == 15 }, "\(replies.map { "\($0.code) \($0.message)" })")
            let newB = try #require(try Self.header(token)["kid"]?.stringValue)
            #expect(newB != kidB && newB != kidA)
            #expect(try Self.activeKid(b) == newB)
            // B's new key was endorsed by nothing A trusts (its predecessor is revoked): A
            // publishes it only once the operator's root endorses it (SPEC §5.4).
            #expect(try Self.jwks(a).kids == [kidA, kidB])
            #expect(try Self.jwks(b).kids == [kidA, kidB, newB])
            #expect(try Self.listKeys(a)[newB]?["trusted"]?.boolValue == false)
            let endorsed = try root.endorse(b, instance: "host-b", via: a)
            #expect(endorsed.status == 0, "\(endorsed.stderr)")
            #expect(try Self.jwks(a).kids == [kidA, kidB, newB])
            #expect(try Self.pyJWTVerifies(token, with: try Self.jwks(a).text).contains("host-b"))
            let keys = try Self.listKeys(a)
            #expect(keys[kidB]?["revoked"]?.boolValue == true && keys[kidB]?["active"]?.boolValue == false, "\(keys)")
            #expect(keys[newB]?["instance"]?.stringValue == "host-b" && keys[newB]?["active"]?.boolValue == true, "\(keys)")

            // The ledger holds exactly the two acknowledged signatures; the one made before the
            // revocation is below its index, so the audit on either daemon is ok.
            #expect(try a.ledgerSignatures().compactMap { $0["payloadSignature"]?.stringValue } == [before, token])
            for daemon in [a, b] {
                let audit = try #require(try daemon.connect().call("admin.auditVerify").result)
                #expect(audit["ok"]?.boolValue == true, "\(audit)")
                #expect(audit["entries"]?.int == (try a.ledgerEntries().count))
            }
        }
    }

    @Test("a second daemon with the same instance name on the database is refused at start (78), naming the cause")
    func duplicateInstanceNamesAreRefused() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let a = try DaemonHarness(config: "instance = \"host-a\"\n" + database.config)
        let kidA = try Self.activeKid(a)
        let twin = try DaemonHarness(config: "instance = \"host-a\"\n" + database.config, start: false)
        #expect(throws: HarnessError.self) { try twin.start() }
        #expect(twin.stop() == 78, "\(twin.log)")
        #expect(twin.log.contains("own instance name"), "\(twin.log)")
        #expect(!FileManager.default.fileExists(atPath: twin.stateDirectory + "/keys/\(kidA).pem"))
        #expect(try Self.activeKid(a) == kidA)
    }
}
