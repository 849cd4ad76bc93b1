import Foundation
import StepSignProtocol
import StepSignClient
import StepSignTestSupport
import Testing

/// `stepsign admin migrate --to postgresql` (issue 14): a SQLite file made by the real daemon,
/// copied by the real CLI (which runs `stepsignd --migrate-to`) into the real PostgreSQL, and
/// the real daemon started on it with the same state directory.
@Suite("stepsign admin migrate: SQLite into PostgreSQL", .blockingSerialized, .enabled(if: PostgresServer.enabled), .serialized)
struct PostgresMigrationTests {
    /// The daemon's config lines: SQLite for now, with the target's `[storage.postgresql]`.
    static func sqliteConfig(_ database: PostgresServer.Database, extra: String = "") -> String {
        "instance = \"host-a\"\n" + database.config.replacingOccurrences(of: "backend = \"postgresql\"", with: "backend = \"sqlite\"")
            + "\n" + extra
    }

    /// Runs `stepsign admin migrate --to postgresql` with the daemon's config and state directory.
    static func migrate(_ daemon: DaemonHarness, json: Bool) throws -> Tools.Result {
        try Tools.run([Binaries.path("stepsign"), "admin", "migrate", "--to", "postgresql", "--config", daemon.configPath,
                       "--state-dir", daemon.stateDirectory] + (json ? ["--json"] : []))
    }

    /// One value from the database, as psql prints it (unaligned, no headers).
    static func query(_ database: PostgresServer.Database, _ sql: String) throws -> String {
        let socketDirectory = try #require(PostgresServer.socketDirectory)
        let result = try Tools.run([PostgresServer.psql, "-h", socketDirectory, "-U", PostgresServer.user, "-d", database.name,
                                    "-v", "ON_ERROR_STOP=1", "-tAq", "-c", sql])
        try #require(result.status == 0, "\(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Rows per table that a migration writes; of the ledger, the signatures (events, SPEC
    /// §5.4, have auth_level -1); checkpoints of both kinds.
    static func counts(_ database: PostgresServer.Database) throws -> String {
        try query(database, """
            SELECT (SELECT count(*) FROM users) || ' ' || (SELECT count(*) FROM password_history) || ' ' ||
                   (SELECT count(*) FROM device_keys) || ' ' || (SELECT count(*) FROM signing_keys) || ' ' ||
                   (SELECT count(*) FROM ledger WHERE auth_level >= 0) || ' ' ||
                   ((SELECT count(*) FROM ledger_checkpoints) + (SELECT count(*) FROM log_checkpoints))
            """)
    }

    /// A SQLite daemon with alice and `count` level-0 signatures, stopped cleanly.
    static func stoppedSQLiteDaemon(_ database: PostgresServer.Database, count: Int) throws -> DaemonHarness {
        let daemon = try DaemonHarness(config: sqliteConfig(database))
        try daemon.addUser()
        let connection = try daemon.connect()
        for index in 1...count {
            let reply = try connection.call("authenticateUserAndSignData", [
                "user": "alice", "payload": "entry \(index)", "reason": "migrate", "authLevel": 0, "authenticatorType": 0,
            ])
            try #require(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100, "\(reply.code) \(reply.message)")
        }
        #expect(daemon.stop() == 0)
        return daemon
    }

    @Test("users, history, counters, a device key, a rotated key, signatures and checkpoints move; the daemon goes on on PostgreSQL")
    func migratesAndDaemonGoesOn() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let secretFile = try PostgresServer.PasswordFile()
        defer { secretFile.remove() }
        let (secret, passwordFile) = (secretFile.secret, secretFile.path)
        // The test server trusts its socket: the password is read as the daemon reads it, never asked for.
        let extra = "password_file = \"\(passwordFile)\"\n[ledger]\ncheckpoint_entries = 4"
        let daemon = try DaemonHarness(config: Self.sqliteConfig(database, extra: extra))
        #expect(daemon.log.contains("storage=sqlite"), "\(daemon.log)")

        // State worth moving: a changed password (history), a device key, a failed attempt,
        // level-0 and level-1 signatures over two keys, checkpoints by count and at shutdown.
        try daemon.addUser()
        try daemon.addUser("bob", password: Passwords.third)
        let update = try daemon.connect()
        _ = try update.startUpdate()
        try #require(try update.updatePassword(current: Passwords.initial, new: Passwords.second, mode: 2)
            .statusCode(of: "onUpdateCredentialResponse") == 100)
        let admin = try daemon.connect()
        let deviceKid = try admin.adminEnroll(try TestDevice())
        let wrong = try daemon.connect().login("bob", password: Passwords.wrong)
        #expect(wrong.int("attemptsLeft", of: "getPassword") == 2, "\(wrong.shape)")
        var signatures: [(id: String, jws: String)] = []
        for index in 1...5 {
            if index == 4 { #expect(try admin.call("admin.rotateKey").code == 0) }
            let reply = index <= 3
                ? try admin.call("authenticateUserAndSignData", [
                    "user": "alice", "payload": "before \(index)", "reason": "r", "authLevel": 0, "authenticatorType": 0,
                ])
                : try daemon.connect().signWithPassword(user: "alice", password: Passwords.second, payload: "before \(index)")
            let details = try #require(reply.event("onAuthenticateUserAndSignData")?["details"],
                                       "\(reply.code) \(reply.message) \(reply.shape)")
            signatures.append((try #require(details["dataSignatureID"]?.stringValue), try #require(details["payloadSignature"]?.stringValue)))
        }
        let keysBefore = try #require(try admin.call("admin.listKeys").result?["keys"]?.arrayValue)
        #expect(keysBefore.count == 2)
        // Signatures and the events of SPEC §5.4 (start, users, password, device key, rotation).
        let entriesBefore = try daemon.ledgerEntries()
        let seqOf = Dictionary(uniqueKeysWithValues: entriesBefore.compactMap { entry in
            entry["signatureID"]?.stringValue.map { ($0, entry["seq"]?.int ?? 0) }
        })
        #expect(daemon.stop() == 0)

        let result = try Self.migrate(daemon, json: true)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret))
        let summary = try #require(try JSONParser.parse(Array(result.stdout.utf8)).members.map { JSONValue.object($0) },
                                   "\(result.stdout)")
        #expect(summary["ok"]?.boolValue == true)
        #expect(summary["signaturesChecked"]?.boolValue == true, "every key record has its public half")
        #expect(summary["users"]?.int == 2)
        #expect(summary["passwordHistory"]?.int == 1)
        #expect(summary["deviceKeys"]?.int == 1)
        #expect(summary["signingKeys"]?.int == 2)
        #expect(summary["ledgerEntries"]?.int == entriesBefore.count)
        let checkpoints = try #require(summary["checkpoints"]?.int)
        #expect(checkpoints >= 2, "every 4th entry by count, one at shutdown: \(summary)")
        #expect((summary["head"])?["seq"]?.int == entriesBefore.count)
        let audit = try #require(summary["audit"])
        #expect(audit["ok"]?.boolValue == true && audit["entries"]?.int == entriesBefore.count, "\(audit)")
        #expect(try Self.counts(database) == "2 1 1 2 5 \(checkpoints)")
        // The log's tree came along as PostgreSQL's append stores it (SPEC §5.5; made in Swift,
        // issue 40): a row per leaf, SHA-256(0x00 ‖ JWS), and one per complete subtree above.
        let leaves = try Self.query(database, """
            SELECT count(*) FROM ledger l JOIN ledger_tree t ON t.id = stepsign_tree_index(0, l.seq - 1)
               AND t.hash = sha256('\\x00'::bytea || convert_to(l.jws, 'UTF8'))
            """)
        #expect(leaves == String(entriesBefore.count))
        #expect(try Self.query(database, "SELECT count(*) FROM ledger_tree")
            == String(2 * entriesBefore.count - entriesBefore.count.nonzeroBitCount))

        // The daemon on PostgreSQL, same state directory (its keys/), same instance.
        try DaemonHarness.writeConfig(
            DaemonHarness.config("instance = \"host-a\"\n" + database.config + "\n" + extra), to: daemon.configPath)
        try daemon.start()
        #expect(daemon.log.contains("storage=postgresql"), "\(daemon.log)")
        #expect(!daemon.log.contains(secret))
        let connection = try daemon.connect()
        try connection.requireLogin(password: Passwords.second)
        // The history came along: the first password may not come back.
        let reuse = try daemon.connect()
        _ = try reuse.startUpdate(password: Passwords.second)
        #expect(try reuse.updatePassword(current: Passwords.second, new: Passwords.initial, mode: 2)
            .statusCode(of: "onUpdateCredentialResponse") == 164)
        // So did bob's failed attempt.
        let again = try daemon.connect().login("bob", password: Passwords.wrong)
        #expect(again.int("attemptsLeft", of: "getPassword") == 1, "\(again.shape)")
        let users = try #require(try connection.call("admin.listUsers").result?["users"]?.arrayValue)
        #expect(users.map { $0["user"]?.stringValue } == ["alice", "bob"])
        #expect(users.first?["deviceKeys"]?.arrayValue?.compactMap(\.stringValue) == [deviceKid], "\(users)")
        let keysAfter = try #require(try connection.call("admin.listKeys").result?["keys"]?.arrayValue)
        #expect(keysAfter.map { $0["kid"]?.stringValue } == keysBefore.map { $0["kid"]?.stringValue })

        for signature in signatures {
            let row = try #require(try connection.call("getSignature", ["signatureID": signature.id]).result)
            #expect(row["seq"]?.int == seqOf[signature.id])
            #expect(row["payloadSignature"]?.stringValue == signature.jws)
        }
        let after = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "after", "reason": "r", "authLevel": 0, "authenticatorType": 0,
        ])
        #expect(after.statusCode(of: "onAuthenticateUserAndSignData") == 100, "\(after.code) \(after.message)")
        let verified = try #require(try connection.call("admin.auditVerify").result)
        #expect(verified["ok"]?.boolValue == true, "\(verified)")
        #expect(verified["entries"]?.int == (try daemon.ledgerEntries().count))
        #expect(try daemon.ledgerSignatures().count == 6)
        #expect((verified["checkpoints"]?.int ?? 0) >= checkpoints)

        let (exported, jwks) = try daemon.exportLedgerAndKeys()
        let ledgerFile = daemon.directory.appendingPathComponent("ledger.jsonl").path
        try exported.stdout.write(toFile: ledgerFile, atomically: true, encoding: .utf8)
        let offline = try Tools.run([Binaries.path("stepsign-verify"), "ledger", ledgerFile, "--keys", jwks])
        #expect(offline.status == 0, "\(offline.stdout) \(offline.stderr)")
        #expect(daemon.stop() == 0)
    }

    @Test("a database that is not empty is refused, exit 1, and nothing is written")
    func refusesNonEmptyTarget() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let daemon = try Self.stoppedSQLiteDaemon(database, count: 3)
        let first = try Self.migrate(daemon, json: false)
        #expect(first.status == 0, "\(first.stderr)")
        // Three signatures after the events of the start and the user added (SPEC §5.4).
        #expect(first.stdout.contains("\(3 + DaemonHarness.startEvents + 1) ledger entries"), "\(first.stdout)")
        #expect(first.stdout.contains("audit on PostgreSQL passes"), "\(first.stdout)")
        let before = try Self.counts(database)
        #expect(before.hasPrefix("1 0 0 1 3 "), "\(before)")

        // Again, after more signatures on the source: the target has rows now.
        try daemon.start()
        let reply = try daemon.connect().call("authenticateUserAndSignData", [
            "user": "alice", "payload": "later", "reason": "r", "authLevel": 0, "authenticatorType": 0,
        ])
        #expect(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        #expect(daemon.stop() == 0)
        let second = try Self.migrate(daemon, json: false)
        #expect(second.status == 1, "\(second.stdout) \(second.stderr)")
        #expect(second.stderr.contains("not empty") && second.stderr.contains("nothing was written"), "\(second.stderr)")
        #expect(try Self.counts(database) == before)

        let json = try Self.migrate(daemon, json: true)
        #expect(json.status == 1)
        let object = try #require(try JSONParser.parse(Array(json.stdout.utf8)).members.map { JSONValue.object($0) }, "\(json.stdout)")
        #expect(object["ok"]?.boolValue == false)
        #expect((object["error"]?.stringValue)?.contains("not empty") == true, "\(object)")
    }

    @Test("a source whose chain is broken (an entry's hash not its JWS's) is refused; nothing is written")
    func refusesBrokenSourceChain() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let daemon = try Self.stoppedSQLiteDaemon(database, count: 6)
        // Entry 3's JWS changed without re-chaining: its entry_hash no longer follows.
        let tampered = try Tools.python(LedgerAttackTests.tamperScript, daemon.stateDirectory + "/stepsign.sqlite",
                                        "UPDATE ledger SET jws = jws || 'x' WHERE seq = 3", "no")
        try #require(tampered.status == 0, "\(tampered.stderr)")
        let result = try Self.migrate(daemon, json: false)
        #expect(result.status == 1, "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("hash chain is broken") && result.stderr.contains("entry 3"), "\(result.stderr)")
        #expect(result.stderr.contains("nothing was written"), "\(result.stderr)")
        #expect(try Self.counts(database) == "0 0 0 0 0 0")
    }

    @Test("bad input: another backend is a usage error (2); no SQLite database (1, none created); an unreachable server (1)")
    func badInput() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let daemon = try DaemonHarness(config: Self.sqliteConfig(database), start: false)
        let other = try Tools.run([Binaries.path("stepsign"), "admin", "migrate", "--to", "mysql", "--config", daemon.configPath])
        #expect(other.status == 2, "\(other.stderr)")
        let missing = try Self.migrate(daemon, json: false)
        #expect(missing.status == 1, "\(missing.stderr)")
        #expect(missing.stderr.contains("no SQLite database"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: daemon.stateDirectory + "/stepsign.sqlite"))

        // A server that cannot be reached: 1, naming where it looked.
        try daemon.start()
        #expect(daemon.stop() == 0)
        try DaemonHarness.writeConfig(DaemonHarness.config(
            Self.sqliteConfig(database).replacingOccurrences(of: PostgresServer.socketDirectory ?? "", with: "/nonexistent-stepsign-pg")),
            to: daemon.configPath)
        let unreachable = try Self.migrate(daemon, json: false)
        #expect(unreachable.status == 1, "\(unreachable.stderr)")
        #expect(unreachable.stderr.contains("/nonexistent-stepsign-pg") && unreachable.stderr.contains("unavailable"),
                "\(unreachable.stderr)")
    }
}

extension PostgresMigrationTests {
    @Test("entries of a revoked key move too (keys are written last) with its revocation index, and the copy audits as the source does")
    func revokedKeyEntriesMove() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let daemon = try DaemonHarness(config: Self.sqliteConfig(database))
        let connection = try daemon.connect()
        func sign(_ payload: String) throws {
            let reply = try connection.call("authenticateUserAndSignData", [
                "user": "alice", "payload": payload, "reason": "r", "authLevel": 0, "authenticatorType": 0,
            ])
            try #require(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100, "\(reply.code) \(reply.message)")
        }
        try sign("one")
        try sign("two")
        let kid = try #require(try connection.call("status").result?["activeKid"]?.stringValue)
        try #require(try connection.call("admin.revokeKey", ["kid": kid]).code == 0)
        try sign("three")
        // The revoked key signed only below its index (SPEC §5.4): the source audit is ok.
        let sourceAudit = try #require(try connection.call("admin.auditVerify").result)
        #expect(sourceAudit["ok"]?.boolValue == true, "\(sourceAudit)")
        let entries = try daemon.ledgerEntries().count
        #expect(daemon.stop() == 0)

        let result = try Self.migrate(daemon, json: true)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let summary = try #require(try JSONParser.parse(Array(result.stdout.utf8)).members.map { JSONValue.object($0) },
                                   "\(result.stdout)")
        let audit = try #require(summary["audit"])
        #expect(audit["ok"]?.boolValue == true, "\(audit)")
        #expect(audit["entries"]?.int == entries)
        #expect(try Self.query(database, "SELECT count(*) FROM ledger WHERE auth_level >= 0") == "3")
        #expect(try Self.query(database, "SELECT count(*) FROM signing_keys WHERE revoked_index IS NOT NULL") == "1")
    }
}

extension PostgresMigrationTests {
    private static let rolesSQL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/sql/roles.sql").path

    @Test("least privilege (docs/decisions.md): migrated as the owner role, then roles.sql; the daemon goes on as the daemon role")
    func leastPrivilegeInstallation() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let owner = "stepsign_owner_\(suffix)", role = "stepsign_daemon_\(suffix)"
        let database = PostgresServer.Database(name: "stepsign_mig_\(suffix)")
        try PostgresServer.administer("CREATE ROLE \(owner) LOGIN")
        try PostgresServer.administer("CREATE ROLE \(role) LOGIN")
        defer {
            database.drop()
            try? PostgresServer.administer("DROP ROLE IF EXISTS \(role)")
            try? PostgresServer.administer("DROP ROLE IF EXISTS \(owner)")
        }
        try PostgresServer.administer("CREATE DATABASE \(database.name) OWNER \(owner)")
        let asUser = { (user: String) in "\nuser = \"\(user)\"" }

        let daemon = try DaemonHarness(config: Self.sqliteConfig(database, extra: asUser(owner)))
        try daemon.addUser()
        let signed = try daemon.connect().signWithPassword(user: "alice", password: DaemonHarness.password, payload: "before")
        #expect(signed.event("onAuthenticateUserAndSignData") != nil, "\(signed.code) \(signed.shape)")
        #expect(daemon.stop() == 0)
        let result = try Self.migrate(daemon, json: false)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")

        let socketDirectory = try #require(PostgresServer.socketDirectory)
        let granted = try Tools.run([PostgresServer.psql, "-h", socketDirectory, "-U", PostgresServer.user, "-d", database.name,
                                     "-v", "ON_ERROR_STOP=1", "-q", "-v", "daemon=\(role)", "-f", Self.rolesSQL])
        #expect(granted.status == 0, "\(granted.stderr)")
        try DaemonHarness.writeConfig(
            DaemonHarness.config("instance = \"host-a\"\n" + database.config + asUser(role)), to: daemon.configPath)
        try daemon.start()
        let connection = try daemon.connect()
        let after = try connection.signWithPassword(user: "alice", password: DaemonHarness.password, payload: "after")
        #expect(after.event("onAuthenticateUserAndSignData") != nil, "\(after.code) \(after.shape)")
        let audit = try #require(try connection.call("admin.auditVerify").result)
        #expect(try audit["ok"]?.boolValue == true && audit["entries"]?.int == (daemon.ledgerEntries().count), "\(audit)")
        #expect(try daemon.ledgerSignatures().count == 2)
        #expect(daemon.stop() == 0)
    }
}

extension PostgresMigrationTests {
    static let approvalRule = """
        [[approval]]
        reason_prefix = "payment:"
        approvers = ["group:treasury"]
        required = 2
        """

    struct Refused: Error, CustomStringConvertible { var description: String }

    static func login(_ user: String, on daemon: DaemonHarness) throws -> StepSignConnection {
        let connection = try daemon.connect()
        _ = try connection.call("setUser", ["user": user])
        let reply = try connection.call("setPassword", ["password": DaemonHarness.password, "challengeMode": 0])
        guard reply.event("onUserLoggedIn") != nil else { throw Refused(description: "\(user) not logged in: \(reply.object)") }
        return connection
    }

    /// `user`'s approval of request `id`, stepped up with the password: the `onApprovalResponse` event.
    static func approve(_ id: String, as user: String, on daemon: DaemonHarness) throws -> JSONValue? {
        let connection = try login(user, on: daemon)
        let challenge = try connection.call("approveRequest", ["approvalID": id])
        guard challenge.code == 0 else { throw Refused(description: "approveRequest: \(challenge.object)") }
        return try connection.call("setPassword", ["password": DaemonHarness.password, "challengeMode": 12]).event("onApprovalResponse")
    }

    /// alice's request for `payload` under the approval rule: its approval ID.
    static func requestApproval(_ payload: String, on daemon: DaemonHarness) throws -> String {
        let requester = try daemon.connect()
        _ = try requester.call("authenticateUserAndSignData", [
            "user": "alice", "payload": payload, "reason": "payment: PO-7", "authLevel": 1, "authenticatorType": 0,
        ])
        let pending = try requester.call("setPassword", ["password": DaemonHarness.password, "challengeMode": 12])
        return try #require(pending.event("onApprovalPending")?["approvalID"]?.stringValue, "not pending: \(pending.object)")
    }

    static func keyedRequest() -> KeyValuePairs<String, any JSONValueConvertible> {
        ["user": "alice", "payload": "pay 10 EUR to Bob", "reason": "refund", "authLevel": 1, "authenticatorType": 0,
         "idempotencyKey": "refund-2026-0001"]
    }

    @Test("groups, requests for approval (pending and signed) and idempotency keys move; a tampered membership does not hold after")
    func approvalsGroupsAndIdempotencyKeysMove() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let daemon = try DaemonHarness(config: Self.sqliteConfig(database, extra: Self.approvalRule))
        for user in ["alice", "bob", "carol", "dave", "erin"] { try daemon.addUser(user) }
        let admin = try daemon.connect()
        for (group, user) in [("treasury", "bob"), ("treasury", "carol"), ("treasury", "erin"), ("audit", "dave")] {
            #expect(try admin.call("admin.addGroupMember", ["group": group, "user": user]).code == 0)
        }
        // A request signed after two approvals, and one pending with bob's.
        let signed = try Self.requestApproval("pay 5000 EUR to ACME", on: daemon)
        #expect(try Self.approve(signed, as: "bob", on: daemon)?["state"]?.stringValue == "pending")
        #expect(try Self.approve(signed, as: "erin", on: daemon)?["state"]?.stringValue == "signed")
        let signedBefore = try daemon.connect().call("getApproval", ["approvalID": signed])
        let signedJWS = try #require(signedBefore.event("onAuthenticateUserAndSignData")?["details"]?["payloadSignature"]?.stringValue)
        let pending = try Self.requestApproval("pay 7000 EUR to ACME", on: daemon)
        #expect(try Self.approve(pending, as: "bob", on: daemon)?["state"]?.stringValue == "pending")
        // A signature made with an idempotencyKey (SPEC §3).
        let keyed = try daemon.connect()
        #expect(try keyed.call("authenticateUserAndSignData", Self.keyedRequest()).eventNames == ["getPassword"])
        let first = try #require(try keyed.call("setPassword", ["password": DaemonHarness.password, "challengeMode": 12])
            .event("onAuthenticateUserAndSignData")?["details"])
        let signaturesBefore = try #require(try daemon.connect().call("status").result?["signatures"]?.int)
        #expect(daemon.stop() == 0)
        // Someone without the seal key moves dave from audit into treasury.
        let tampered = try Tools.python(LedgerAttackTests.tamperScript, daemon.stateDirectory + "/stepsign.sqlite",
                                        "UPDATE group_members SET group_name = 'treasury' WHERE user_name = 'dave'", "no")
        try #require(tampered.status == 0, "\(tampered.stderr)")

        let result = try Self.migrate(daemon, json: true)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let summary = try #require(try JSONParser.parse(Array(result.stdout.utf8)).members.map { JSONValue.object($0) },
                                   "\(result.stdout)")
        #expect(summary["groupMembers"]?.int == 4)
        #expect(summary["approvals"]?.int == 2 && summary["pendingApprovals"]?.int == 1 && summary["approvalVotes"]?.int == 3)
        #expect(summary["idempotencyKeys"]?.int == 1)
        let failing = try #require(summary["failingSeal"], "\(summary)")
        #expect(failing["groupMembers"]?.arrayValue?.map { "\($0["group"]?.stringValue ?? ""):\($0["user"]?.stringValue ?? "")" }
            == ["treasury:dave"], "\(failing)")
        #expect(failing["approvals"]?.arrayValue?.isEmpty == true, "\(failing)")
        let prose = try Self.migrateAgainForProse(database, daemon)
        #expect(prose.contains("4 group memberships") && prose.contains("2 requests for approval (1 pending)"), "\(prose)")
        #expect(prose.contains("1 idempotency key") && prose.contains("treasury: dave"), "\(prose)")

        try DaemonHarness.writeConfig(
            DaemonHarness.config("instance = \"host-a\"\n" + database.config + "\n" + Self.approvalRule), to: daemon.configPath)
        try daemon.start()
        #expect(daemon.log.contains("storage=postgresql"), "\(daemon.log)")
        let connection = try daemon.connect()
        let groups = try #require(try connection.call("admin.listGroups").result?["groups"]?.arrayValue)
        #expect(groups.map { $0["group"]?.stringValue } == ["treasury"], "\(groups)")
        #expect(groups.first?["members"]?.arrayValue?.compactMap(\.stringValue) == ["bob", "carol", "erin"], "\(groups)")
        // The signed request is there as it was.
        let signedAfter = try connection.call("getApproval", ["approvalID": signed])
        #expect(signedAfter.result?["state"]?.stringValue == "signed", "\(signedAfter.object)")
        #expect(signedAfter.event("onAuthenticateUserAndSignData")?["details"]?["payloadSignature"]?.stringValue == signedJWS)
        // The pending one is listed, and carol's approval completes it beside bob's.
        let listed = try Self.login("carol", on: daemon).call("listApprovals").result?["approvals"]?.arrayValue ?? []
        #expect(listed.map { $0["approvalID"]?.stringValue } == [pending], "\(listed)")
        // dave's forged membership does not count.
        #expect(throws: Refused.self) { try Self.approve(pending, as: "dave", on: daemon) }
        let completed = try Self.approve(pending, as: "carol", on: daemon)
        #expect(completed?["state"]?.stringValue == "signed" && completed?["approvals"]?.int == 2, "\(String(describing: completed))")
        // The retry with the same key gets the first signature again: no second ledger entry.
        let retry = try daemon.connect().call("authenticateUserAndSignData", Self.keyedRequest())
        #expect(retry.eventNames == ["onAuthenticateUserAndSignData"], "\(retry.object)")
        let again = try #require(retry.event("onAuthenticateUserAndSignData")?["details"])
        #expect(again["replayed"]?.boolValue == true)
        for member in ["dataSignatureID", "payloadSignature", "logIndex"] { #expect(again[member] == first[member], "\(member)") }
        // One more signature: the pending request's, none for the retry.
        #expect(try daemon.connect().call("status").result?["signatures"]?.int == signaturesBefore + 1)
        let audit = try #require(try connection.call("admin.auditVerify").result)
        #expect(audit["ok"]?.boolValue == true, "\(audit)")
        #expect(daemon.stop() == 0)
    }

    /// The prose summary of the same copy: into a second, fresh database.
    static func migrateAgainForProse(_ database: PostgresServer.Database, _ daemon: DaemonHarness) throws -> String {
        let other = try PostgresServer.createDatabase()
        defer { other.drop() }
        let config = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
        try DaemonHarness.writeConfig(
            config.replacingOccurrences(of: "database = \"\(database.name)\"", with: "database = \"\(other.name)\""), to: daemon.configPath)
        defer { try? DaemonHarness.writeConfig(config, to: daemon.configPath) }
        let result = try Self.migrate(daemon, json: false)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        return result.stdout
    }
}
