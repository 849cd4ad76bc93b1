import Foundation
import StepSignTestSupport
import Testing

/// The PostgreSQL server of the tests, from the environment `scripts/pg-test-server start`
/// prints (as the store tests use it). Without it the daemon-on-PostgreSQL tests are skipped
/// with a note, unless `STEPSIGN_REQUIRE_PG=1` (CI), where they fail.
enum PostgresServer {
    static let environment = ProcessInfo.processInfo.environment
    static let socketDirectory: String? = environment["STEPSIGN_TEST_PG_SOCKET_DIR"].flatMap { $0.isEmpty ? nil : $0 }
    static let user = environment["STEPSIGN_TEST_PG_USER"] ?? "postgres"
    static let maintenanceDatabase = environment["STEPSIGN_TEST_PG_DATABASE"] ?? "postgres"
    static let required = environment["STEPSIGN_REQUIRE_PG"] == "1"

    /// Whether the tests run: a server is set, or one is required (its absence then fails them).
    static let enabled: Bool = {
        if socketDirectory == nil, !required {
            FileHandle.standardError.write(Data("""
                note: the daemon-on-PostgreSQL integration tests were NOT run: STEPSIGN_TEST_PG_SOCKET_DIR is not set \
                (eval "$(scripts/pg-test-server start)" first, or run scripts/test)\n
                """.utf8))
        }
        return socketDirectory != nil || required
    }()

    struct NotConfigured: Error, CustomStringConvertible {
        var description: String {
            "STEPSIGN_REQUIRE_PG=1 but STEPSIGN_TEST_PG_SOCKET_DIR is not set: no PostgreSQL server for the tests"
        }
    }

    struct PSQLFailure: Error, CustomStringConvertible {
        var status: Int32
        var stderr: String
        var description: String { "psql exited with \(status): \(stderr)" }
    }

    static var psql: String {
        let bundled = "/usr/lib/postgresql/15/bin/psql"
        return FileManager.default.isExecutableFile(atPath: bundled) ? bundled : "psql"
    }

    /// Runs one SQL statement as the superuser in the maintenance database.
    static func administer(_ sql: String) throws {
        guard let socketDirectory else { throw NotConfigured() }
        let result = try Tools.run([psql, "-h", socketDirectory, "-U", user, "-d", maintenanceDatabase,
                                    "-v", "ON_ERROR_STOP=1", "-q", "-c", sql])
        guard result.status == 0 else { throw PSQLFailure(status: result.status, stderr: result.stderr) }
    }

    /// A database password file (0600, in a directory of its own) holding a fresh secret that
    /// tests look for in logs and output; `remove()` deletes it.
    struct PasswordFile {
        let directory: URL
        let secret = "db-Secret-\(UUID().uuidString)"
        var path: String { directory.appendingPathComponent("db-password").path }

        init() throws {
            directory = try TemporaryDirectory("tests").url
            try (secret + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// A fresh database, dropped when the returned value's `drop()` runs.
    static func createDatabase() throws -> Database {
        let name = "stepsign_d_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try administer("CREATE DATABASE \(name)")
        return Database(name: name)
    }

    struct Database {
        let name: String

        /// The daemon's config lines (as `DaemonHarness(config:)` takes them) for this database.
        var config: String {
            """
            [storage]
            backend = "postgresql"
            \(TestSealKey.configLine)
            [storage.postgresql]
            host = "\(PostgresServer.socketDirectory ?? "/nonexistent")"
            database = "\(name)"
            user = "\(PostgresServer.user)"
            pool_size = 4
            """
        }

        /// Runs one SQL statement as the superuser in this database.
        func execute(_ sql: String) throws {
            guard let socketDirectory = PostgresServer.socketDirectory else { throw NotConfigured() }
            let result = try Tools.run([PostgresServer.psql, "-h", socketDirectory, "-U", PostgresServer.user, "-d", name,
                                        "-v", "ON_ERROR_STOP=1", "-q", "-c", sql])
            guard result.status == 0 else { throw PSQLFailure(status: result.status, stderr: result.stderr) }
        }

        /// Runs one query as the superuser in this database; the rows' first column, as text.
        func query(_ sql: String) throws -> [String] {
            guard let socketDirectory = PostgresServer.socketDirectory else { throw NotConfigured() }
            let result = try Tools.run([PostgresServer.psql, "-h", socketDirectory, "-U", PostgresServer.user, "-d", name,
                                        "-v", "ON_ERROR_STOP=1", "-q", "-At", "-c", sql])
            guard result.status == 0 else { throw PSQLFailure(status: result.status, stderr: result.stderr) }
            return result.stdout.split(separator: "\n").map(String.init)
        }

        func drop() {
            try? PostgresServer.administer("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        }
    }
}
