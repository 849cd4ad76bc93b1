import Foundation
import StepSignClient
import StepSignCrypto
import StepSignFormat
import StepSignTestSupport
import Testing

/// `admin.revokeKey` and `admin.listKeys` (SPEC §3.2): a compromised key leaves the published
/// keys at once, and its signatures stop verifying with them.
@Suite("Signing key revocation")
struct KeyRevocationTests {
    func sign(_ connection: StepSignConnection, _ payload: String) throws -> String {
        let reply = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": payload, "reason": "r", "authLevel": 0, "authenticatorType": 0,
        ])
        return try #require((reply.event("onAuthenticateUserAndSignData")?["details"])?["payloadSignature"]?.stringValue)
    }

    @Test("revoking the active key rotates first, drops it from getPublicKeys, and its signatures stop verifying")
    func revokeActiveKey() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        let old = try sign(connection, "before")
        let oldKid = try #require(try connection.call("status").result?["activeKid"]?.stringValue)
        #expect(try StepSignSignature.verify(old, trustedKeys: try connection.trustedKeys()).payload == "before")

        let reply = try connection.call("admin.revokeKey", ["kid": oldKid])
        try #require(reply.code == 0, "\(reply.message)")
        let newKid = try #require(reply.result?["activeKid"]?.stringValue)
        #expect(newKid != oldKid)
        let trusted = try connection.trustedKeys()
        #expect(trusted.key(kid: oldKid) == nil)
        #expect(throws: SignatureVerificationError.unknownKeyID(oldKid)) {
            try StepSignSignature.verify(old, trustedKeys: trusted)
        }
        let pem = try #require(try connection.call("getPublicKeys", ["format": "pem"]).result?["pem"]?.stringValue)
        #expect(try TrustedKeys(parsing: pem).key(kid: oldKid) == nil)
        let fresh = try sign(connection, "after")
        #expect(try JWS.parse(fresh).header.kid == newKid)

        let keys = try #require(try connection.call("admin.listKeys").result?["keys"]?.arrayValue)
        let row = try #require(keys.first { $0["kid"]?.stringValue == oldKid })
        #expect(row["revoked"]?.boolValue == true)
        #expect(row["active"]?.boolValue == false)
        #expect(row["instance"]?.stringValue == "stepsign-test")
        #expect(row["createdAt"]?.int != nil)
        #expect(keys.first { $0["kid"]?.stringValue == newKid }?["revoked"]?.boolValue == false)

        // The audit reports the revoked key's entry instead of hiding it.
        let audit = try #require(try connection.call("admin.auditVerify").result)
        #expect(audit["ok"]?.boolValue == false)
        #expect((audit["problem"]?.stringValue)?.contains("revoked") == true, "\(audit)")

        // Revocation outlives a restart; revoking twice or an unknown kid is error 4.
        #expect(daemon.stop() == 0)
        try daemon.start()
        let again = try daemon.connect()
        #expect(try again.trustedKeys().key(kid: oldKid) == nil)
        #expect(try again.call("admin.revokeKey", ["kid": oldKid]).code == 4)
        #expect(try again.call("admin.revokeKey", ["kid": "no-such-kid"]).code == 4)
        #expect(try again.call("status").result?["activeKid"]?.stringValue == newKid)
    }

    @Test("stepsign admin key revoke and list show the new columns")
    func cli() throws {
        let daemon = try DaemonHarness()
        let environment = ["STEPSIGN_SOCKET": daemon.socketPath]
        let rotated = try Tools.run([Binaries.path("stepsign"), "admin", "key", "rotate"], environment: environment)
        let retiredKid = try #require(try daemon.connect().call("admin.listKeys").result?["keys"]?.arrayValue)
            .first { $0["active"]?.boolValue == false }?["kid"]?.stringValue
        let revoked = try Tools.run([Binaries.path("stepsign"), "admin", "key", "revoke", try #require(retiredKid)], environment: environment)
        #expect(revoked.status == 0, "\(revoked.stderr)")
        #expect(revoked.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == rotated.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        let list = try Tools.run([Binaries.path("stepsign"), "admin", "key", "list", "--json"], environment: environment)
        #expect(list.stdout.contains("\"revoked\""))
        #expect(list.stdout.contains("\"instance\""))
    }
}
