import Foundation
import StepSignClient
import StepSignTestSupport
import Testing

/// `[storage.postgresql] tls` against a real PostgreSQL over TCP (issue 14): a server of its
/// own with `ssl = on` and a certificate from a test CA for localhost and 127.0.0.1,
/// reachable over TCP only through TLS with scram-sha-256 (`PostgresTLSServer`).
@Suite("Daemon on PostgreSQL over TCP and TLS", .blockingSerialized, .enabled(if: PostgresServer.enabled), .serialized, TLSPostgresServer())
struct PostgresTLSTests {
    private static func server() throws -> PostgresTLSServer {
        try #require(TLSPostgresServer.current, "no TLS test server")
    }

    /// The role's password, to check that no log holds it.
    private static func password(_ server: PostgresTLSServer) throws -> String {
        try String(contentsOfFile: server.passwordFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A fresh database of the TLS server for `body`, dropped after it.
    private static func withDatabase(_ body: (PostgresTLSServer, String) throws -> Void) throws {
        let server = try server()
        let database = try server.createDatabase()
        defer { _ = try? server.query("DROP DATABASE IF EXISTS \(database) WITH (FORCE)") }
        try body(server, database)
    }

    /// A daemon that must not start: its exit status and log.
    private static func refusedStart(_ config: String) throws -> (status: Int32?, log: String) {
        let daemon = try DaemonHarness(config: config, start: false)
        try daemon.start(waitForSocket: false)
        let status = daemon.process?.wait(timeout: 90)
        return (status, daemon.log)
    }

    @Test("tls = require: every connection of the daemon is TLS (pg_stat_ssl), logged in with scram-sha-256 from password_file, which no log holds")
    func requireUsesTLS() throws {
        try Self.withDatabase { server, database in
            let daemon = try DaemonHarness(config: "instance = \"tls-require\"\n" + server.config(database: database, tls: "require"))
            try daemon.addUser()
            let signed = try daemon.connect().signWithPassword(user: "alice", password: DaemonHarness.password, payload: "over TLS")
            #expect(signed.event("onAuthenticateUserAndSignData")?["details"] != nil, "\(signed.code) \(signed.shape)")
            // While the pool's connections are open: each is TLS, from 127.0.0.1.
            let row = try server.query("""
                SELECT count(*) FILTER (WHERE s.ssl), count(*), coalesce(min(s.version), '')
                FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
                WHERE a.datname = '\(database)' AND a.usename = '\(server.user)' AND a.client_addr = '127.0.0.1'
                """).trimmingCharacters(in: .whitespacesAndNewlines)
            let fields = row.split(separator: "|").map(String.init)
            #expect(fields.count == 3, "\(row)")
            #expect((Int(fields.first ?? "") ?? 0) >= 1 && fields.first == fields.dropFirst().first, "TLS / all: \(row)")
            #expect(fields.last?.hasPrefix("TLSv1.") == true, "\(row)")
            // The role's password is a SCRAM verifier, and pg_hba allows nothing else over TCP.
            let verifier = try server.query("SELECT rolpassword LIKE 'SCRAM-SHA-256$%' FROM pg_authid WHERE rolname = '\(server.user)'")
            #expect(verifier.trimmingCharacters(in: .whitespacesAndNewlines) == "t")
            let audit = try #require(try daemon.connect().call("admin.auditVerify").result)
            #expect(try audit["ok"]?.boolValue == true && audit["entries"]?.int == (daemon.ledgerEntries().count), "\(audit)")
            #expect(try daemon.ledgerSignatures().count == 1)
            #expect(daemon.stop() == 0)
            #expect(daemon.log.contains("PostgreSQL store open"), "\(daemon.log)")
            #expect(!daemon.log.contains(try Self.password(server)), "the database password is in the log")
        }
    }

    @Test("tls = verify-full with tls_ca_file: the certificate verifies for the name localhost and for the address 127.0.0.1",
          arguments: ["localhost", "127.0.0.1"])
    func verifyFullSucceeds(host: String) throws {
        try Self.withDatabase { server, database in
            let config = "instance = \"tls-verify\"\n"
                + server.config(database: database, host: host, tls: "verify-full", caFile: server.caFile)
            let daemon = try DaemonHarness(config: config)
            let reply = try daemon.connect().call("authenticateUserAndSignData", [
                "user": "alice", "payload": "verified server", "reason": "r", "authLevel": 0, "authenticatorType": 0,
            ])
            #expect(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100, "\(reply.code) \(reply.shape)")
            let ssl = try server.query("""
                SELECT bool_and(s.ssl) FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
                WHERE a.datname = '\(database)' AND a.usename = '\(server.user)'
                """)
            #expect(ssl.trimmingCharacters(in: .whitespacesAndNewlines) == "t", "\(ssl)")
            #expect(daemon.stop() == 0)
        }
    }

    @Test("tls = verify-full to 127.0.0.2, which the certificate does not name: exit 78, a clear log line, nothing stored")
    func verifyFullWrongHost() throws {
        try Self.withDatabase { server, database in
            let (status, log) = try Self.refusedStart(
                "instance = \"tls-wrong-host\"\n"
                    + server.config(database: database, host: "127.0.0.2", tls: "verify-full", caFile: server.caFile))
            #expect(status == 78, "\(log)")
            #expect(log.contains("cannot use TLS with PostgreSQL"), "\(log)")
            #expect(log.contains("127.0.0.2:\(server.port)"), "\(log)")
            #expect(log.contains("the server's certificate is not for `host`"), "\(log)")
            #expect(!log.contains(try Self.password(server)))
            // The handshake failed before the login: the schema was never created.
            let tables = try server.query("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", database: database)
            #expect(tables.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        }
    }

    @Test("tls = verify-full without tls_ca_file: the system's roots do not know the test CA, exit 78")
    func verifyFullUnknownCA() throws {
        try Self.withDatabase { server, database in
            let (status, log) = try Self.refusedStart(
                "instance = \"tls-no-ca\"\n" + server.config(database: database, host: "localhost", tls: "verify-full"))
            #expect(status == 78, "\(log)")
            #expect(log.contains("cannot use TLS with PostgreSQL"), "\(log)")
            #expect(log.contains("handshake failed") && log.contains("CERTIFICATE_VERIFY_FAILED"), "\(log)")
        }
    }

    @Test("tls = require against a server that offers no TLS (ssl = off): exit 78 at once, a clear log line, nothing stored")
    func requireWithoutServerTLS() throws {
        try Self.withDatabase { server, database in
            try server.query("ALTER SYSTEM SET ssl = off")
            try server.query("SELECT pg_reload_conf()")
            defer {
                _ = try? server.query("ALTER SYSTEM RESET ssl")
                _ = try? server.query("SELECT pg_reload_conf()")
            }
            // The reload is asynchronous: wait until the server says TLS is off.
            for _ in 0..<100 where try server.query("SHOW ssl").trimmingCharacters(in: .whitespacesAndNewlines) != "off" {
                usleep(50_000)
            }
            let started = Date()
            let (status, log) = try Self.refusedStart(
                "instance = \"tls-none\"\n" + server.config(database: database, tls: "require"))
            #expect(status == 78, "\(log)")
            #expect(log.contains("cannot use TLS with PostgreSQL"), "\(log)")
            #expect(!log.contains(try Self.password(server)))
            // Not the pool's minute of retries: a server without TLS will not grow it.
            #expect(Date().timeIntervalSince(started) < 45, "\(log)")
            let tables = try server.query("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", database: database)
            #expect(tables.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        }
    }

    @Test("tls = disable against a server that allows TCP only with TLS (hostssl): exit 78 with the server's reason")
    func disableRefused() throws {
        try Self.withDatabase { server, database in
            let (status, log) = try Self.refusedStart(
                "instance = \"tls-disable\"\n" + server.config(database: database, tls: "disable"))
            #expect(status == 78, "\(log)")
            #expect(log.contains("PostgreSQL refuses the daemon's login or database"), "\(log)")
            #expect(log.contains("no encryption"), "\(log)")
        }
    }

    @Test("a wrong password over TLS: exit 78, the server's reason logged, neither password in the log")
    func wrongPassword() throws {
        try Self.withDatabase { server, database in
            let directory = try TemporaryDirectory("tests").url
            defer { try? FileManager.default.removeItem(at: directory) }
            let wrong = "not-the-db-password-\(UUID().uuidString)"
            let file = directory.appendingPathComponent("db-password").path
            try (wrong + "\n").write(toFile: file, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
            let (status, log) = try Self.refusedStart(
                "instance = \"tls-wrong-password\"\n" + server.config(database: database, tls: "require", passwordFile: file))
            #expect(status == 78, "\(log)")
            #expect(log.contains("password authentication failed"), "\(log)")
            let password = try Self.password(server)
            #expect(!log.contains(wrong) && !log.contains(password))
        }
    }

    @Test("strict modes: a tls_ca_file that others may write is refused (exit 78 naming the key); a private copy is used")
    func caFileStrictModes() throws {
        try Self.withDatabase { server, database in
            let directory = try TemporaryDirectory("tests").url
            defer { try? FileManager.default.removeItem(at: directory) }
            let ca = directory.appendingPathComponent("ca.pem").path
            try FileManager.default.copyItem(atPath: server.caFile, toPath: ca)
            try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: ca)
            let config = "instance = \"tls-ca-modes\"\n"
                + server.config(database: database, host: "localhost", tls: "verify-full", caFile: ca)
            let (status, log) = try Self.refusedStart(config)
            #expect(status == 78, "\(log)")
            #expect(log.contains("storage.postgresql.tls_ca_file"), "\(log)")
            // Readable by all is fine (a CA certificate is public): 0644 starts.
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: ca)
            let daemon = try DaemonHarness(config: config)
            #expect(try daemon.connect().call("status").code == 0)
            #expect(daemon.stop() == 0)
        }
    }
}
