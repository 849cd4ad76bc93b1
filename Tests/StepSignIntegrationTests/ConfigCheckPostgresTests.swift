import Foundation
import StepSignTestSupport
import Testing

/// `stepsignd --check` on PostgreSQL (SPEC §8, issue 42): the server reached and its schema read
/// on one connection, never migrated; a newer schema or a missing database exits 78 naming the
/// file, line and key.
@Suite("stepsignd --check on PostgreSQL", .blocking, .enabled(if: PostgresServer.enabled))
struct ConfigCheckPostgresTests {
    /// A daemon (not started) on `database`, its socket and state directory in the file.
    private func daemon(_ database: PostgresServer.Database) throws -> DaemonHarness {
        let daemon = try DaemonHarness(start: false)
        let server = "[server]\nsocket = \"\(daemon.socketPath)\"\nstate_dir = \"\(daemon.stateDirectory)\"\n"
        try DaemonHarness.writeConfig(DaemonHarness.config(server + database.config), to: daemon.configPath)
        return daemon
    }

    private func check(_ daemon: DaemonHarness) throws -> Tools.Result {
        try Tools.run([Binaries.path("stepsignd"), "--check", "--config", daemon.configPath], timeout: 120)
    }

    private func line(_ daemon: DaemonHarness, _ text: String) throws -> Int {
        let lines = try String(contentsOfFile: daemon.configPath, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        return try #require(lines.firstIndex { $0.hasPrefix(text) }) + 1
    }

    @Test("an empty database exits 0 and stays empty; after the first start its schema is current")
    func reachable() throws {
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let daemon = try self.daemon(database)
        let fresh = try check(daemon)
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(fresh.stdout.contains("configuration ok"), "\(fresh.stdout)")
        #expect(fresh.stdout.contains("schema v0, migrated to v"), "\(fresh.stdout)")
        // Read only: no table was made.
        #expect(try database.query("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == ["0"])

        try daemon.start()
        #expect(daemon.stop() == 0)
        let result = try check(daemon)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("configuration ok"), "\(result.stdout)")
        #expect(!result.stdout.contains("migrated"), "\(result.stdout)")
    }

    @Test("a schema newer than this build exits 78 naming [storage.postgresql]'s line")
    func newerSchema() throws {
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let daemon = try self.daemon(database)
        try daemon.start()
        #expect(daemon.stop() == 0)
        try database.execute("INSERT INTO stepsign_schema_migrations (version, name) VALUES (999, 'from a newer stepsignd')")
        let result = try check(daemon)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains(
            "\(daemon.configPath):\(try line(daemon, "[storage.postgresql]")): storage.postgresql: the PostgreSQL schema is at version 999, newer than this stepsignd supports"),
                "\(result.stderr)")
    }

    @Test("a database that does not exist exits 78 naming storage.postgresql.database's line")
    func missingDatabase() throws {
        let daemon = try self.daemon(PostgresServer.Database(name: "stepsign_no_such_database"))
        let result = try check(daemon)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("\(daemon.configPath):\(try line(daemon, "database = ")): storage.postgresql.database: "),
                "\(result.stderr)")
    }
}
