import Foundation
import StepSignClient
import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import StepSignTestSupport
import Testing

/// `admin.revokeKey` and `admin.listKeys` (SPEC §3.2, §5.4): a compromised key is revoked at a
/// log index R, by a signed event; its signatures below R stay valid with proof of their index,
/// and nothing it signs from R on is.
@Suite("Signing key revocation", .blocking)
struct KeyRevocationTests {
    func sign(_ connection: StepSignConnection, _ payload: String) throws -> String {
        let reply = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": payload, "reason": "r", "authLevel": 0, "authenticatorType": 0,
        ])
        return try #require((reply.event("onAuthenticateUserAndSignData")?["details"])?["payloadSignature"]?.stringValue)
    }

    @Test("revoking the active key rotates first; the JWKS keeps it with stepsign_revoked_at; its signatures verify only below that index")
    func revokeActiveKey() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        let old = try sign(connection, "before")
        let oldKid = try #require(try connection.call("status").result?["activeKid"]?.stringValue)
        let oldID = try StepSignSignature.verify(old, trustedKeys: try connection.trustedKeys()).jti
        let oldIndex = try #require(try connection.call("getSignature", ["signatureID": oldID]).result?["seq"]?.int).advanced(by: -1)

        let reply = try connection.call("admin.revokeKey", ["kid": oldKid])
        try #require(reply.code == 0, "\(reply.message)")
        let newKid = try #require(reply.result?["activeKid"]?.stringValue)
        let revokedAt = try #require(reply.result?["revokedAt"]?.int)
        #expect(newKid != oldKid)
        #expect(revokedAt > oldIndex)
        // The JWKS keeps the key with the index (PyJWT and the others read it as a plain key;
        // stepsign-verify applies the index); the PEM bundle, which cannot say it, leaves it out.
        let jwks = try #require(try connection.call("getPublicKeys").result?["jwks"])
        let row = try #require(jwks["keys"]?.arrayValue?.first { $0["kid"]?.stringValue == oldKid })
        #expect(row["stepsign_revoked_at"]?.int == revokedAt, "\(row)")
        let trusted = try connection.trustedKeys()
        #expect(trusted.revokedAt[oldKid] == Int64(revokedAt))
        #expect(throws: SignatureVerificationError.revokedKey(kid: oldKid, revokedAt: Int64(revokedAt), logIndex: nil)) {
            try StepSignSignature.verify(old, trustedKeys: trusted)
        }
        #expect(try StepSignSignature.verify(old, trustedKeys: trusted, logIndex: Int64(oldIndex)).payload == "before")
        #expect(throws: SignatureVerificationError.self) {
            try StepSignSignature.verify(old, trustedKeys: trusted, logIndex: Int64(revokedAt))
        }
        let pem = try #require(try connection.call("getPublicKeys", ["format": "pem"]).result?["pem"]?.stringValue)
        #expect(try TrustedKeys(parsing: pem).key(kid: oldKid) == nil)
        let fresh = try sign(connection, "after")
        #expect(try JWS.parse(fresh).header.kid == newKid)

        let keys = try #require(try connection.call("admin.listKeys").result?["keys"]?.arrayValue)
        let listed = try #require(keys.first { $0["kid"]?.stringValue == oldKid })
        #expect(listed["revoked"]?.boolValue == true)
        #expect(listed["revokedAt"]?.int == revokedAt)
        #expect(listed["active"]?.boolValue == false)
        #expect(listed["instance"]?.stringValue == "stepsign-test")
        #expect(listed["createdAt"]?.int != nil)
        #expect(keys.first { $0["kid"]?.stringValue == newKid }?["revoked"]?.boolValue == false)

        // The revocation is a signed event in the ledger, at index R.
        let entries = try #require(try connection.call("admin.exportLedger").result?["entries"]?.arrayValue)
        let event = try #require(entries.first { $0["seq"]?.int == revokedAt + 1 })
        #expect(event["kind"]?.stringValue == "event")
        let (revocation, _) = try LedgerEvent.verify(try #require(event["payloadSignature"]?.stringValue), trustedKeys: trusted)
        #expect(revocation.kind == .signingKeyRevoked && revocation.detail("kid") == oldKid)

        // A revoked key used only below its index leaves the audit ok.
        let audit = try #require(try connection.call("admin.auditVerify").result)
        #expect(audit["ok"]?.boolValue == true, "\(audit)")

        // Revocation outlives a restart; revoking twice or an unknown kid is error 4.
        #expect(daemon.stop() == 0)
        try daemon.start()
        let again = try daemon.connect()
        #expect(try again.trustedKeys().revokedAt[oldKid] == Int64(revokedAt))
        #expect(try again.call("admin.revokeKey", ["kid": oldKid]).code == 4)
        #expect(try again.call("admin.revokeKey", ["kid": "no-such-kid"]).code == 4)
        #expect(try again.call("status").result?["activeKid"]?.stringValue == newKid)
    }

    @Test("stepsign admin key rotate, revoke and list: each exits 0 and prints the active key; the list shows the revoked one; revoking it again exits 1 with the daemon's reason")
    func cli() throws {
        let daemon = try DaemonHarness()
        func stepsign(_ arguments: String...) throws -> Tools.Result {
            try Tools.run([Binaries.path("stepsign")] + arguments, environment: ["STEPSIGN_SOCKET": daemon.socketPath])
        }
        func activeKid() throws -> String {
            try #require(try daemon.connect().call("status").result?["activeKid"]?.stringValue)
        }
        let first = try activeKid()
        let rotated = try stepsign("admin", "key", "rotate")
        #expect(rotated.status == 0, "\(rotated.stderr)")
        let second = try activeKid()
        #expect(second != first)
        #expect(rotated.stdout == "active key \(second)\n")

        let revoked = try stepsign("admin", "key", "revoke", first)
        #expect(revoked.status == 0, "\(revoked.stderr)")
        #expect(revoked.stdout == "active key \(second)\n")

        let list = try stepsign("admin", "key", "list", "--json")
        #expect(list.status == 0, "\(list.stderr)")
        let keys = try #require(try JSONParser.parse(Array(list.stdout.utf8)).arrayValue, "\(list.stdout)")
        let byKid = Dictionary(keys.map { ($0["kid"]?.stringValue ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        #expect(Set(byKid.keys) == [first, second] && keys.count == 2, "\(list.stdout)")
        #expect(byKid[first]?["revoked"]?.boolValue == true && byKid[first]?["active"]?.boolValue == false, "\(list.stdout)")
        #expect(byKid[second]?["revoked"]?.boolValue == false && byKid[second]?["active"]?.boolValue == true, "\(list.stdout)")
        #expect(keys.allSatisfy { $0["instance"]?.stringValue == "stepsign-test" && $0["createdAt"]?.int != nil }, "\(list.stdout)")

        let again = try stepsign("admin", "key", "revoke", first)
        #expect(again.status == 1 && again.stdout.isEmpty)
        #expect(again.stderr == "stepsign: admin.revokeKey refused: error 4: key \"\(first)\" is already revoked\n")
        #expect(try activeKid() == second)
    }
}
