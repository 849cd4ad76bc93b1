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
        return try #require((reply.event("onAuthenticateUserAndSignData")?["details"] as? [String: Any])?["payloadSignature"] as? String)
    }

    @Test("revoking the active key rotates first, drops it from getPublicKeys, and its signatures stop verifying")
    func revokeActiveKey() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        let old = try sign(connection, "before")
        let oldKid = try #require(try connection.call("status").result?["activeKid"] as? String)
        #expect(try StepSignSignature.verify(old, trustedKeys: try connection.trustedKeys()).payload == "before")

        let reply = try connection.call("admin.revokeKey", ["kid": oldKid])
        try #require(reply.code == 0, "\(reply.message)")
        let newKid = try #require(reply.result?["activeKid"] as? String)
        #expect(newKid != oldKid)
        let trusted = try connection.trustedKeys()
        #expect(trusted.key(kid: oldKid) == nil)
        #expect(throws: SignatureVerificationError.unknownKeyID(oldKid)) {
            try StepSignSignature.verify(old, trustedKeys: trusted)
        }
        let pem = try #require(try connection.call("getPublicKeys", ["format": "pem"]).result?["pem"] as? String)
        #expect(try TrustedKeys(parsing: pem).key(kid: oldKid) == nil)
        let fresh = try sign(connection, "after")
        #expect(try JWS.parse(fresh).header.kid == newKid)

        let keys = try #require(try connection.call("admin.listKeys").result?["keys"] as? [[String: Any]])
        let row = try #require(keys.first { $0["kid"] as? String == oldKid })
        #expect(row["revoked"] as? Bool == true)
        #expect(row["active"] as? Bool == false)
        #expect(row["instance"] as? String == "stepsign-test")
        #expect(row["createdAt"] as? Int != nil)
        #expect(keys.first { $0["kid"] as? String == newKid }?["revoked"] as? Bool == false)

        // The audit reports the revoked key's entry instead of hiding it.
        let audit = try #require(try connection.call("admin.auditVerify").result)
        #expect(audit["ok"] as? Bool == false)
        #expect((audit["problem"] as? String)?.contains("revoked") == true, "\(audit)")

        // Revocation outlives a restart; revoking twice or an unknown kid is error 4.
        #expect(daemon.stop() == 0)
        try daemon.start()
        let again = try daemon.connect()
        #expect(try again.trustedKeys().key(kid: oldKid) == nil)
        #expect(try again.call("admin.revokeKey", ["kid": oldKid]).code == 4)
        #expect(try again.call("admin.revokeKey", ["kid": "no-such-kid"]).code == 4)
        #expect(try again.call("status").result?["activeKid"] as? String == newKid)
    }

    @Test("stepsign admin key revoke and list show the new columns")
    func cli() throws {
        let daemon = try DaemonHarness()
        let environment = ["STEPSIGN_SOCKET": daemon.socketPath]
        let rotated = try Tools.run([Binaries.path("stepsign"), "admin", "key", "rotate"], environment: environment)
        let retiredKid = try #require(try daemon.connect().call("admin.listKeys").result?["keys"] as? [[String: Any]])
            .first { $0["active"] as? Bool == false }?["kid"] as? String
        let revoked = try Tools.run([Binaries.path("stepsign"), "admin", "key", "revoke", try #require(retiredKid)], environment: environment)
        #expect(revoked.status == 0, "\(revoked.stderr)")
        #expect(revoked.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == rotated.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        let list = try Tools.run([Binaries.path("stepsign"), "admin", "key", "list", "--json"], environment: environment)
        #expect(list.stdout.contains("\"revoked\""))
        #expect(list.stdout.contains("\"instance\""))
    }
}
