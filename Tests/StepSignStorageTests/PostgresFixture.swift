import Foundation
import Logging
import PostgresNIO
import StepSignPostgres
import Testing

/// The PostgreSQL server of the tests, from the environment that `scripts/pg-test-server
/// start` prints (`scripts/test` always sets it, with `STEPSIGN_REQUIRE_PG=1`).
enum PostgresTestServer {
    static let environment = ProcessInfo.processInfo.environment

    /// The socket directory, maintenance database and superuser, or nil when not set.
    static let settings: (socketDirectory: String, database: String, user: String)? = {
        guard let directory = environment["STEPSIGN_TEST_PG_SOCKET_DIR"], !directory.isEmpty else { return nil }
        return (directory, environment["STEPSIGN_TEST_PG_DATABASE"] ?? "postgres", environment["STEPSIGN_TEST_PG_USER"] ?? "postgres")
    }()

    /// Whether a missing server fails the run (CI) rather than leaving the PostgreSQL runs out.
    static let required = environment["STEPSIGN_REQUIRE_PG"] == "1"

    /// Whether the PostgreSQL runs happen: a server is set, or one is required (and its
    /// absence then fails every PostgreSQL run).
    static let enabled: Bool = {
        if settings == nil, !required {
            FileHandle.standardError.write(Data("""
                note: the PostgreSQL store tests were NOT run: STEPSIGN_TEST_PG_SOCKET_DIR is not set \
                (eval "$(scripts/pg-test-server start)" first, or run scripts/test)\n
                """.utf8))
        }
        return settings != nil || required
    }()

    struct NotConfigured: Error, CustomStringConvertible {
        var description: String {
            "STEPSIGN_REQUIRE_PG=1 but STEPSIGN_TEST_PG_SOCKET_DIR is not set: no PostgreSQL server for the tests"
        }
    }

    static func requireSettings() throws -> (socketDirectory: String, database: String, user: String) {
        guard let settings else { throw NotConfigured() }
        return settings
    }

    /// Runs `sql` (one statement) as `user` (the superuser by default) in `database` (the
    /// maintenance database by default) and returns the first column of each row as text.
    @discardableResult
    static func administer(_ sql: String, database: String? = nil, user: String? = nil) async throws -> [String?] {
        let settings = try requireSettings()
        let logger = Logger(label: "stepsign.tests.postgres")
        let configuration = PostgresConnection.Configuration(
            unixSocketPath: settings.socketDirectory + "/.s.PGSQL.5432", username: user ?? settings.user, password: nil,
            database: database ?? settings.database
        )
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        do {
            var values: [String?] = []
            let rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
            for try await row in rows {
                let cell = row.makeRandomAccess()[0]
                values.append(cell.bytes.map { String(buffer: $0) })
            }
            try await connection.close()
            return values
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// The SQLSTATE `sql` fails with when run as `user` in `database`, or nil if it succeeds.
    static func sqlState(of sql: String, database: String, user: String? = nil) async throws -> String? {
        do {
            try await administer(sql, database: database, user: user)
            return nil
        } catch let error as PSQLError {
            return error.serverInfo?[.sqlState] ?? "no server error: \(error.code)"
        }
    }

    /// A store configuration for `database` as the superuser (or `user`).
    static func configuration(database: String, user: String? = nil, poolSize: Int = 4) throws -> PostgresStoreConfiguration {
        let settings = try requireSettings()
        var configuration = PostgresStoreConfiguration(host: settings.socketDirectory, database: database,
                                                       user: user ?? settings.user, poolSize: poolSize)
        // The store tests are about the data, not outages (the fault tests are): a healthy server
        // stalled for seconds by a loaded machine must not turn a call into "unavailable".
        configuration.leaseTimeout = .seconds(60)
        return configuration
    }
}

/// A fresh, empty database on the test server, dropped by ``drop()``.
struct TemporaryPostgresDatabase {
    let name: String

    static func create() async throws -> TemporaryPostgresDatabase {
        let name = "stepsign_t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await PostgresTestServer.administer("CREATE DATABASE \(name)")
        return TemporaryPostgresDatabase(name: name)
    }

    func configuration(user: String? = nil, poolSize: Int = 4) throws -> PostgresStoreConfiguration {
        try PostgresTestServer.configuration(database: name, user: user, poolSize: poolSize)
    }

    func open(poolSize: Int = 4) async throws -> PostgresStore {
        try await PostgresStore.open(try configuration(poolSize: poolSize), seal: TestSeal.seal)
    }

    func drop() async {
        _ = try? await PostgresTestServer.administer("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}

/// Creates a fresh database, runs `body` with it and drops it, however `body` ends.
@discardableResult
func withPostgresDatabase<T>(_ body: (TemporaryPostgresDatabase) async throws -> T) async throws -> T {
    let database = try await TemporaryPostgresDatabase.create()
    do {
        let result = try await body(database)
        await database.drop()
        return result
    } catch {
        await database.drop()
        throw error
    }
}
