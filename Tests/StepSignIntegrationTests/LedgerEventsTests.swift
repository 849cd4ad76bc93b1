import Foundation
import StepSignClient
import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import StepSignTestSupport
import Testing

/// SPEC §5.4 "Events in the log": every change of who may sign is a signed
/// `stepsign-event+jwt` entry with the peer that asked and no secret; an admin change costs one
/// entry; exports tell events from signatures; `getSignature` returns signatures only.
@Suite("Events in the ledger", .blocking)
struct LedgerEventsTests {
    /// The events the ledger holds after `seq`, verified with the daemon's keys.
    static func events(_ daemon: DaemonHarness, after seq: Int = 0) throws -> [(seq: Int, event: LedgerEvent)] {
        let trusted = try daemon.connect().trustedKeys()
        return try daemon.ledgerEntries().filter { ($0["seq"]?.int ?? 0) > seq && $0["kind"]?.stringValue == "event" }.map { entry in
            let jws = try #require(entry["payloadSignature"]?.stringValue)
            return (try #require(entry["seq"]?.int), try LedgerEvent.verify(jws, trustedKeys: trusted).event)
        }
    }

    /// Runs `change` and returns the entries it added: exactly one, an event of `kind`.
    @discardableResult
    static func oneEvent(_ daemon: DaemonHarness, _ kind: LedgerEvent.Kind, user: String? = nil,
                         sourceLocation: SourceLocation = #_sourceLocation, _ change: () throws -> Void) throws -> LedgerEvent {
        let before = try daemon.ledgerEntries().count
        try change()
        let added = try events(daemon, after: before)
        #expect(try daemon.ledgerEntries().count == before + 1, "one entry per change", sourceLocation: sourceLocation)
        let event = try #require(added.first?.event, sourceLocation: sourceLocation)
        #expect(event.kind == kind && event.user == user, "\(event.event) \(event.user ?? "-")", sourceLocation: sourceLocation)
        return event
    }

    @Test("each admin change is one signed event naming the peer that asked; no password in any of them")
    func adminChanges() throws {
        let daemon = try DaemonHarness()
        // The start: the key made and the configuration loaded (its SHA-256).
        let start = try Self.events(daemon)
        #expect(start.map(\.event.kind) == [.signingKeyCreated, .configurationLoaded])
        let configuration = try Data(contentsOf: URL(fileURLWithPath: daemon.configPath))
        #expect(start.last?.event.detail("sha256") == Hex.encode(SHA256.hash(Array(configuration))))

        let admin = try daemon.connect()
        let added = try Self.oneEvent(daemon, .userAdded, user: "alice") { try daemon.addUser() }
        #expect(added.peer.uid == getuid() && added.peer.pid == getpid(), "\(added.peer)")
        try Self.oneEvent(daemon, .passwordExpired, user: "alice") {
            try #require(try admin.call("admin.expirePassword", ["user": "alice"]).code == 0)
        }
        try Self.oneEvent(daemon, .userUnlocked, user: "alice") {
            try #require(try admin.call("admin.unlockUser", ["user": "alice"]).code == 0)
        }
        let device = try TestDevice()
        let enrolled = try Self.oneEvent(daemon, .deviceKeyEnrolled, user: "alice") { _ = try admin.adminEnroll(device) }
        let deviceKid = try #require(enrolled.detail("deviceKeyId"))
        try Self.oneEvent(daemon, .deviceKeyRevoked, user: "alice") {
            try #require(try admin.call("admin.revokeDeviceKey", ["user": "alice", "deviceKeyId": deviceKid]).code == 0)
        }
        let old = try #require(try admin.call("status").result?["activeKid"]?.stringValue)
        let rotated = try Self.oneEvent(daemon, .signingKeyRotated) {
            try #require(try admin.call("admin.rotateKey").code == 0)
        }
        #expect(rotated.detail("previous") == old)
        let revoked = try Self.oneEvent(daemon, .signingKeyRevoked) {
            try #require(try admin.call("admin.revokeKey", ["kid": old]).code == 0)
        }
        #expect(revoked.detail("kid") == old)
        try Self.oneEvent(daemon, .configurationLoaded) {
            let outcome = try daemon.reloadAsIs()
            #expect(outcome == .reloaded)
        }
        try Self.oneEvent(daemon, .userRemoved, user: "alice") {
            try #require(try admin.call("admin.removeUser", ["user": "alice"]).code == 0)
        }

        // No secret, nor anything of one, in any event.
        for entry in try daemon.ledgerEntries() where entry["kind"]?.stringValue == "event" {
            let jws = try #require(entry["payloadSignature"]?.stringValue)
            let claims = String(decoding: try JWS.parse(jws).payload, as: UTF8.self)
            #expect(!claims.contains(DaemonHarness.password) && !claims.contains("scrypt") && !claims.contains("$"), "\(claims)")
        }
        // getSignature returns signatures only, even to an admin.
        let id = try #require(try daemon.ledgerEntries().first { $0["kind"]?.stringValue == "event" }?["signatureID"]?.stringValue)
        #expect(try admin.call("getSignature", ["signatureID": id]).code == 4)
        // The audit and the offline verifier count them apart.
        let audit = try #require(try admin.call("admin.auditVerify").result)
        #expect(audit["ok"]?.boolValue == true, "\(audit)")
        #expect(audit["events"]?.int == (try daemon.ledgerEventCount()))
        let (export, jwks) = try daemon.exportLedgerAndKeys()
        let path = daemon.directory.appendingPathComponent("ledger.jsonl").path
        try export.stdout.write(toFile: path, atomically: true, encoding: .utf8)
        let offline = try Tools.run([Binaries.path("stepsign-verify"), "ledger", path, "--keys", jwks])
        let eventCount = try daemon.ledgerEventCount()
        #expect(offline.status == 0 && offline.stdout.contains("(0 signatures, \(eventCount) events)"), "\(offline.stdout)\(offline.stderr)")
    }

    @Test("a user's password change and the block of the last wrong answer are events; a name that is not a user leaves none")
    func credentialEvents() throws {
        let daemon = try DaemonHarness(config: "[password]\nmax_attempts = 2")
        try daemon.addUser()
        let update = try daemon.connect()
        _ = try update.startUpdate()
        try Self.oneEvent(daemon, .passwordChanged, user: "alice") {
            try #require(try update.updatePassword(current: Passwords.initial, new: Passwords.second, mode: 2)
                .statusCode(of: "onUpdateCredentialResponse") == 100)
        }
        let before = try daemon.ledgerEntries().count
        for _ in 0..<2 { _ = try daemon.connect().login("alice", password: Passwords.wrong) }
        for _ in 0..<2 { _ = try daemon.connect().login("nobody", password: Passwords.wrong) }
        // Recorded after the reply (a user's last wrong answer takes as long as a stranger's).
        var blocked: [LedgerEvent] = []
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, blocked.isEmpty {
            blocked = try Self.events(daemon, after: before).map(\.event).filter { $0.kind == .userBlocked }
            if blocked.isEmpty { usleep(50_000) }
        }
        #expect(blocked.map(\.user) == ["alice"])
        #expect(try Self.events(daemon, after: before).count == 1, "nothing for the name that is not a user")
    }
}
