import Foundation
import StepSignProtocol
import StepSignTestSupport
import StepSignClient
import StepSignFormat
import Testing

/// State that must survive the daemon: keys, users, counters, the ledger (SPEC §5).
@Suite("Persistence", .blocking)
struct PersistenceTests {
    private func signLevelZero(_ connection: StepSignConnection, _ payload: String) throws -> JSONValue {
        let reply = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": payload, "reason": "r", "authLevel": 0, "authenticatorType": 0,
        ])
        return reply.event("onAuthenticateUserAndSignData")?["details"] ?? [:]
    }

    @Test("the signing key, users and the ledger survive a restart")
    func restart() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let before = try daemon.connect()
        let first = try signLevelZero(before, "one")
        let kid = try #require(try before.call("status").result?["activeKid"]?.stringValue)
        #expect(daemon.stop() == 0)

        try daemon.start()
        let after = try daemon.connect()
        let status = try #require(try after.call("status").result)
        #expect(status["activeKid"]?.stringValue == kid)
        #expect(status["signatures"]?.int == 1)
        let signed = try after.signWithPassword(user: DaemonHarness.user, password: DaemonHarness.password)
        #expect(signed.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        let row = try after.call("getSignature", ["signatureID": first["dataSignatureID"]?.stringValue ?? ""])
        // The first signature's row, after the events of the start and of the user added (SPEC §5.4).
        #expect(row.result?["seq"]?.int == (try daemon.ledgerSignatures().first?["seq"]?.int))
        #expect(try daemon.ledgerSignatures().count == 2)
        #expect(try after.call("admin.auditVerify").result?["entries"]?.int == (try daemon.ledgerEntries().count))
    }

    @Test("the key file is PKCS#8 PEM with mode 0600 in a 0700 directory")
    func keyFileModes() throws {
        let daemon = try DaemonHarness()
        let keys = daemon.stateDirectory + "/keys"
        let files = try FileManager.default.contentsOfDirectory(atPath: keys).filter { $0.hasSuffix(".pem") }
        #expect(files.count == 1)
        let attributes = try FileManager.default.attributesOfItem(atPath: keys + "/" + files[0])
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let directory = try FileManager.default.attributesOfItem(atPath: keys)
        #expect((directory[.posixPermissions] as? Int) == 0o700)
        let pem = try String(contentsOfFile: keys + "/" + files[0], encoding: .utf8)
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
    }

    @Test("admin.auditVerify finds a ledger row changed on disk", arguments: ["jws", "delete", "swap"])
    func auditFindsTampering(kind: String) throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        for index in 1...4 { _ = try signLevelZero(connection, "payload \(index)") }
        #expect(daemon.stop() == 0)
        let database = daemon.stateDirectory + "/stepsign.sqlite"
        let sql: String = switch kind {
        case "jws": "UPDATE ledger SET jws = jws || 'x' WHERE seq = 2"
        case "delete": "DELETE FROM ledger WHERE seq = 2"
        default: "UPDATE ledger SET seq = 100 WHERE seq = 2; UPDATE ledger SET seq = 2 WHERE seq = 3; UPDATE ledger SET seq = 3 WHERE seq = 100"
        }
        // Someone with the file drops the append-only triggers first, as an attacker could.
        try Tools.checkedPython("""
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1])
            for (name,) in c.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
                c.execute(f'DROP TRIGGER "{name}"')
            c.executescript(sys.argv[2])
            c.commit()
            """, database, sql)
        try daemon.start()
        let audit = try #require(try daemon.connect().call("admin.auditVerify").result)
        #expect(audit["ok"]?.boolValue == false)
        #expect(audit["firstBadSeq"]?.int == 2)
    }
}
