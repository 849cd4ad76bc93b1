import Logging
import PostgresNIO
import StepSignStorage

/// The schema of the configured PostgreSQL database as this build sees it, read on one
/// connection without migrating, locking or writing anything (`stepsignd --check`).
package struct PostgresSchemaState: Sendable, Equatable {
    /// The version the database is at (0: no stepsign schema yet).
    package var found: Int
    /// The latest version this build knows.
    package var supported: Int

    /// Connects as the daemon would (password file, TLS, connect timeout) and reads the
    /// schema's version. Throws ``PostgresStoreError`` as ``PostgresStore/open(_:seal:logger:pool:)``
    /// does: `unavailable` when the server cannot be reached, `server` for a refused login or a
    /// missing database, `tls`, `passwordFile`, `configuration`.
    package static func read(_ configuration: PostgresStoreConfiguration,
                             logger: Logger = Logger(label: "stepsign.check", factory: { _ in SwiftLogNoOpLogHandler() }))
        async throws -> PostgresSchemaState {
        try configuration.validate()
        let password = try configuration.readPassword()
        let settings = try PostgresStore.singleConnectionConfiguration(configuration, password: password)
        do {
            let connection = try await PostgresConnection.connect(configuration: settings, id: 0, logger: logger)
            do {
                let exists = try await connection.query(
                    "SELECT to_regclass(\(PostgresSchema.versionTable)) IS NOT NULL", logger: logger
                ).decode(Bool.self).first { _ in true } ?? false
                var found = 0
                if exists {
                    found = try await connection.query(
                        "SELECT coalesce(max(version), 0) FROM stepsign_schema_migrations", logger: logger
                    ).decode(Int.self).first { _ in true } ?? 0
                }
                try await connection.close()
                return PostgresSchemaState(found: found, supported: PostgresSchema.latestVersion)
            } catch {
                try? await connection.close()
                throw error
            }
        } catch {
            throw PostgresStore.mapped(error)
        }
    }
}
