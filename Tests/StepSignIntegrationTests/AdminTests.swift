import Foundation
import StepSignTestSupport
import StepSignClient
import StepSignCrypto
import StepSignFormat
import Testing

/// Admin and public operations against the real daemon (SPEC §3.2).
@Suite("Admin and public operations", .blocking)
struct AdminTests {
    @Test("admin.addUser refuses a password that breaks the policy with 4 and the reason")
    func addUserPolicy() throws {
        let daemon = try DaemonHarness()
        let reply = try daemon.connect().call("admin.addUser", ["user": "bob", "password": "short"])
        #expect(reply.code == 4)
        #expect(reply.message.contains("minL"))
    }

    @Test("admin.addUser refuses a user that exists")
    func addUserTwice() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let reply = try daemon.connect().call("admin.addUser", ["user": DaemonHarness.user, "password": DaemonHarness.password])
        #expect(reply.code == 4)
    }

    @Test("admin.rotateKey makes a new active key; signatures by the retired key still verify")
    func rotateKey() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        let old = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "before", "reason": "r", "authLevel": 0, "authenticatorType": 0,
        ])
        let oldJWS = try #require((old.event("onAuthenticateUserAndSignData")?["details"])?["payloadSignature"]?.stringValue)
        let oldKid = try #require(try connection.call("status").result?["activeKid"]?.stringValue)
        let rotated = try connection.call("admin.rotateKey")
        let newKid = try #require(rotated.result?["activeKid"]?.stringValue)
        #expect(newKid != oldKid)
        let keys = try #require(try connection.call("admin.listKeys").result?["keys"]?.arrayValue)
        #expect(keys.count == 2)
        #expect(keys.filter { $0["active"]?.boolValue == true }.map { $0["kid"]?.stringValue } == [newKid])
        let trusted = try connection.trustedKeys()
        #expect(try StepSignSignature.verify(oldJWS, trustedKeys: trusted).payload == "before")
        let fresh = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "after", "reason": "r", "authLevel": 0, "authenticatorType": 0,
        ])
        let freshJWS = try #require((fresh.event("onAuthenticateUserAndSignData")?["details"])?["payloadSignature"]?.stringValue)
        #expect(try JWS.parse(freshJWS).header.kid == newKid)
    }

    @Test("getPublicKeys answers a PEM bundle that verifies the daemon's signatures")
    func publicKeysPEM() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        let pem = try #require(try connection.call("getPublicKeys", ["format": "pem"]).result?["pem"]?.stringValue)
        #expect(pem.contains("-----BEGIN PUBLIC KEY-----"))
        let reply = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "p", "reason": "r", "authLevel": 0, "authenticatorType": 0,
        ])
        let jws = try #require((reply.event("onAuthenticateUserAndSignData")?["details"])?["payloadSignature"]?.stringValue)
        #expect(try StepSignSignature.verify(jws, trustedKeys: TrustedKeys(parsing: pem)).payload == "p")
    }

    @Test("getSignature returns the ledger row with the peer that asked")
    func getSignatureOwnSession() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        let reply = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "p", "reason": "r", "authLevel": 0, "authenticatorType": 0,
        ])
        let details = try #require(reply.event("onAuthenticateUserAndSignData")?["details"])
        let signatureID = try #require(details["dataSignatureID"]?.stringValue)
        let row = try #require(try connection.call("getSignature", ["signatureID": signatureID]).result)
        #expect(row["signatureID"]?.stringValue == signatureID)
        #expect(row["user"]?.stringValue == "alice")
        #expect(row["payloadSignature"]?.stringValue == details["payloadSignature"]?.stringValue)
        // After the daemon's start events (SPEC §5.4: the key it made, the configuration it loaded).
        #expect(row["seq"]?.int == (try daemon.ledgerEntries().last?["seq"]?.int))
        #expect(try daemon.ledgerSignatures().count == 1)
        #expect((row["entryHash"]?.stringValue)?.count == 64)
        let peer = try #require(row["peer"])
        #expect(peer["uid"]?.int == Int(getuid()))
        #expect(peer["pid"]?.int == Int(getpid()))
    }

    @Test("getSignature from another, non-admin session is error 13")
    func getSignatureOtherSession() throws {
        let daemon = try DaemonHarness(config: "[access]\nadmin_uids = []")
        let reply = try daemon.connect().call("authenticateUserAndSignData", [
            "user": "alice", "payload": "p", "reason": "r", "authLevel": 0, "authenticatorType": 0,
        ])
        let signatureID = try #require((reply.event("onAuthenticateUserAndSignData")?["details"])?["dataSignatureID"]?.stringValue)
        #expect(try daemon.connect().call("getSignature", ["signatureID": signatureID]).code == 13)
    }

    @Test("admin operations from a client that is not an admin are error 13")
    func adminNeedsAdmin() throws {
        let daemon = try DaemonHarness(config: "[access]\nadmin_uids = []")
        let connection = try daemon.connect()
        #expect(try connection.call("admin.listKeys").code == 13)
        #expect(try connection.call("status").code == 0)
    }

    @Test("a peer on no access list gets one reply with error 13 and is disconnected")
    func refusedPeer() throws {
        let daemon = try DaemonHarness(start: false)
        try DaemonHarness.config("[access]\nadmin_uids = []\nclient_uids = []")
            .write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        let process = try Subprocess(
            executable: Binaries.path("stepsignd"),
            arguments: ["--config", daemon.configPath, "--socket", daemon.socketPath, "--state-dir", daemon.stateDirectory]
        )
        defer { process.signal(SIGKILL) }
        var connection: StepSignConnection?
        for _ in 0..<500 where connection == nil {
            connection = try? StepSignConnection(socketPath: daemon.socketPath)
            if connection == nil { usleep(20_000) }
        }
        let refused = try #require(connection)
        let reply = try ClientReply(line: refused.readLine())
        #expect(reply.code == 13)
        #expect(throws: ClientError.self) { try refused.readLine(timeout: 10) }
    }

    @Test("admin.auditVerify passes on an intact ledger")
    func auditIntact() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        for index in 0..<5 {
            _ = try connection.call("authenticateUserAndSignData", [
                "user": "alice", "payload": "p\(index)", "reason": "r", "authLevel": 0, "authenticatorType": 0,
            ])
        }
        let audit = try #require(try connection.call("admin.auditVerify").result)
        #expect(audit["ok"]?.boolValue == true)
        #expect(audit["entries"]?.int == 5 + (try daemon.ledgerEventCount()))
        #expect(audit["firstBadSeq"] == .null)
    }
}
