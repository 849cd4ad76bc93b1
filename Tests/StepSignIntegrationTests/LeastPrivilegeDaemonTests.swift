import Foundation
import StepSignCrypto
import StepSignClient
import StepSignTestSupport
import Testing

/// SPEC §5.2 "Least privilege", with the real daemon: the owner role makes the schema (a
/// daemon run once as it), `docs/sql/roles.sql` grants the daemon role what it needs, and
/// daemons logged in as that role do everything a daemon does (users, keys of their own,
/// rotation and revocation, signing, checkpoints, audit) while the database refuses that role
/// any change to the ledger.
@Suite("Daemon as the least-privilege role", .blockingSerialized, .enabled(if: PostgresServer.enabled), .serialized)
struct LeastPrivilegeDaemonTests {
    private static let rolesSQL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/sql/roles.sql").path

    private static func psql(_ arguments: [String], database: String, user: String = PostgresServer.user) throws -> Tools.Result {
        guard let socketDirectory = PostgresServer.socketDirectory else { throw PostgresServer.NotConfigured() }
        return try Tools.run([PostgresServer.psql, "-h", socketDirectory, "-U", user, "-d", database,
                              "-v", "ON_ERROR_STOP=1", "-q", "-At"] + arguments)
    }

    private static func config(instance: String, database: String, user: String) -> String {
        """
        instance = "\(instance)"
        [storage]
        backend = "postgresql"
        \(TestSealKey.configLine)
        [storage.postgresql]
        host = "\(PostgresServer.socketDirectory ?? "/nonexistent")"
        database = "\(database)"
        user = "\(user)"
        pool_size = 2
        """
    }

    /// A database owned by a fresh owner role, and a fresh daemon role; all dropped after.
    private static func withInstallation(_ body: (_ name: String, _ owner: String, _ role: String) throws -> Void) throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let owner = "stepsign_owner_\(suffix)", role = "stepsign_daemon_\(suffix)", name = "stepsign_lp_\(suffix)"
        try PostgresServer.administer("CREATE ROLE \(owner) LOGIN")
        try PostgresServer.administer("CREATE ROLE \(role) LOGIN")
        defer {
            try? PostgresServer.administer("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            try? PostgresServer.administer("DROP ROLE IF EXISTS \(role)")
            try? PostgresServer.administer("DROP ROLE IF EXISTS \(owner)")
        }
        try PostgresServer.administer("CREATE DATABASE \(name) OWNER \(owner)")
        try body(name, owner, role)
    }

    @Test("daemons logged in as the roles.sql role serve every operation; the role cannot change the ledger")
    func daemonRoleServesAndCannotRewrite() throws {
        try Self.withInstallation { name, owner, role in

            // Installation: one daemon run as the owner makes the schema (and its key), then stops.
            let setup = try DaemonHarness(config: Self.config(instance: "setup", database: name, user: owner))
            let setupKid = try #require(try setup.connect().call("status").result?["activeKid"]?.stringValue)
            #expect(setup.stop() == 0)
            let granted = try Self.psql(["-v", "daemon=\(role)", "-f", Self.rolesSQL], database: name)
            #expect(granted.status == 0, "\(granted.stderr)")

            // Day to day: two daemons as the daemon role, trusting one cluster root, which also
            // endorses the setup daemon's key (it signed the events of its start, SPEC §5.4).
            let root = try ClusterRoot()
            let a = try DaemonHarness(config: Self.config(instance: "host-a", database: name, user: role) + "\n" + root.config)
            let b = try DaemonHarness(config: Self.config(instance: "host-b", database: name, user: role) + "\n" + root.config)
            try root.endorse([(a, "host-a"), (b, "host-b")])
            #expect(try root.endorse(kid: setupKid, instance: "setup", via: a).status == 0)
            try a.addUser()
            try b.connect().requireLogin()
            for daemon in [a, b] {
                let signed = try daemon.connect().signWithPassword(user: "alice", password: DaemonHarness.password)
                #expect(signed.event("onAuthenticateUserAndSignData")?["details"] != nil, "\(signed.code) \(signed.shape)")
            }
            let kidB = try #require(try b.connect().call("status").result?["activeKid"]?.stringValue)
            #expect(try b.connect().call("admin.rotateKey").code == 0)
            #expect(try a.connect().call("admin.revokeKey", ["kid": kidB]).code == 0)
            #expect(try a.connect().call("getCheckpoint").code == 0)
            #expect(try a.connect().call("admin.removeUser", ["user": "alice"]).code == 0)
            let audit = try #require(try b.connect().call("admin.auditVerify").result)
            #expect(audit["entries"]?.int == 2 + (try b.ledgerEventCount()), "\(audit)")

            // What a stolen daemon credential cannot do: the database says 42501 (insufficient privilege).
            // psql exits 1 when the server refuses the statement, and prints the server's reason.
            for (sql, reason) in [
                ("UPDATE ledger SET user_name = 'mallory'", "permission denied for table ledger"),
                ("DELETE FROM ledger", "permission denied for table ledger"),
                ("TRUNCATE ledger", "permission denied for table ledger"),
                ("DELETE FROM ledger_checkpoints", "permission denied for table ledger_checkpoints"),
                ("ALTER TABLE ledger DISABLE TRIGGER ALL", "must be owner of table ledger"),
                ("DROP TRIGGER ledger_rules ON ledger", "must be owner of relation ledger"),
            ] {
                let refused = try Self.psql(["-c", sql], database: name, user: role)
                #expect(refused.status == 1 && refused.stderr.hasPrefix("ERROR:  \(reason)\n"), "\(sql): \(refused.status) \(refused.stderr)")
            }
            // Nor make a key trusted (SPEC §5.4): a key row the role inserts is listed untrusted.
            let forger = try P256PrivateKey.generate()
            let pem = forger.publicKey.spkiPEM.replacingOccurrences(of: "'", with: "")
            let inserted = try Self.psql(["-c", """
                INSERT INTO signing_keys (kid, created_at, active, instance, public_key)
                VALUES ('\(forger.publicKey.thumbprint)', now(), true, 'host-evil', '\(pem)')
                """], database: name, user: role)
            #expect(inserted.status == 0, "\(inserted.stderr)")
            for daemon in [a, b] {
                let jwks = try #require(try daemon.connect().call("getPublicKeys").result?["jwks"]?.jsonText)
                #expect(!jwks.contains(forger.publicKey.thumbprint))
                let keys = try #require(try daemon.connect().call("admin.listKeys").result?["keys"]?.arrayValue)
                #expect(keys.first { $0["kid"]?.stringValue == forger.publicKey.thumbprint }?["trusted"]?.boolValue == false)
            }
            let count = try Self.psql(["-c", "SELECT count(*) FROM ledger WHERE auth_level >= 0"], database: name, user: role)
            #expect(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "2", "\(count.stdout) \(count.stderr)")
        }
    }

    @Test("an older schema the daemon role may not migrate: exit 78 saying to run once as the owner; nothing changed")
    func pendingMigrationNeedsTheOwner() throws {
        try Self.withInstallation { name, owner, role in
            let setup = try DaemonHarness(config: Self.config(instance: "setup", database: name, user: owner))
            #expect(setup.stop() == 0)
            #expect(try Self.psql(["-v", "daemon=\(role)", "-f", Self.rolesSQL], database: name).status == 0)
            // As if the database were one version behind this daemon (an upgrade of the package).
            let latest = try Self.psql(["-c", "SELECT max(version) FROM stepsign_schema_migrations"], database: name)
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let applied = try Self.psql(["-c", "SELECT count(*) FROM stepsign_schema_migrations"], database: name)
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try Self.psql(["-c", "DELETE FROM stepsign_schema_migrations WHERE version = \(latest)"], database: name).status == 0)

            let daemon = try DaemonHarness(config: Self.config(instance: "host-a", database: name, user: role), start: false)
            #expect(throws: HarnessError.self) { try daemon.start() }
            #expect(daemon.stop() == 78, "\(daemon.log)")
            #expect(daemon.log.contains("run stepsignd once as the owner role"), "\(daemon.log)")
            let versions = try Self.psql(["-c", "SELECT count(*) FROM stepsign_schema_migrations"], database: name)
            #expect(versions.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == String((Int(applied) ?? 0) - 1))
        }
    }
}
