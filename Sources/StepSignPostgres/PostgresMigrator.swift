import Foundation
import Logging
import PostgresNIO
import StepSignCrypto
import StepSignStorage

/// Applies ``PostgresSchema``'s missing migrations, meets the seal key (``PostgresStore/prepareSeal(_:on:logger:)``:
/// checked, or stored with every record sealed the first time) and reads the store's name key.
///
/// One transaction under `pg_advisory_xact_lock`: of several daemons starting at once on an
/// empty database, one creates the schema and the others wait, then find it. A role without
/// the right to create tables (docs/sql/roles.sql) opens an up-to-date database without
/// running any DDL.
struct PostgresMigrator {
    let logger: Logger

    func migrate(on connection: AnsweredConnection, seal: CredentialSeal) async throws -> [UInt8] {
        try await connection.query("BEGIN", logger: logger)
        do {
            let key = try await migrate(connection)
            try await PostgresStore.prepareSeal(seal, on: connection, logger: logger)
            try await PostgresStore.prepareApprovalSeals(seal, on: connection, logger: logger)
            try await connection.query("COMMIT", logger: logger)
            return key
        } catch {
            if !connection.isClosed { _ = try? await connection.query("ROLLBACK", logger: logger) }
            throw error
        }
    }

    private func migrate(_ connection: AnsweredConnection) async throws -> [UInt8] {
        try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.migrationLockKey))", logger: logger)
        var current = 0
        let exists = try await connection.query(
            "SELECT to_regclass(\(PostgresSchema.versionTable)) IS NOT NULL", logger: logger
        ).decode(Bool.self).first { _ in true } ?? false
        if exists {
            let rows = try await connection.query(
                "SELECT coalesce(max(version), 0) FROM stepsign_schema_migrations", logger: logger
            )
            current = try await rows.decode(Int.self).first { _ in true } ?? 0
        }
        guard current <= PostgresSchema.latestVersion else {
            throw PostgresStoreError.schemaTooNew(found: current, supported: PostgresSchema.latestVersion)
        }
        for migration in PostgresSchema.migrations where migration.version > current {
            logger.info("applying migration", metadata: ["migration": "\(migration.name)"])
            do {
                try await apply(migration, connection)
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == SQLState.insufficientPrivilege {
                // insufficient_privilege: "must be owner of table …" for the daemon role, or the
                // version row it may not write (a migration whose statements find nothing to do,
                // as v20's `DROP … IF EXISTS` on a database without those functions).
                throw PostgresStoreError.migrationNotPermitted(found: current, needed: PostgresSchema.latestVersion)
            }
        }
        let stored = try await connection.query(
            "SELECT value FROM store_secrets WHERE name = 'name_key'", logger: logger
        ).decode(Data.self).first { _ in true }.map { [UInt8]($0) }
        guard let stored, stored.count == 32 else {
            throw StorageError.malformedRow(table: "store_secrets", detail: "name_key is missing or not 32 bytes")
        }
        return stored
    }

    /// One migration's statements, what it fills in, and its version row.
    private func apply(_ migration: PostgresSchema.Migration, _ connection: AnsweredConnection) async throws {
        for statement in migration.statements {
            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
        if migration.version == 14 {
            try await PostgresStore.fillNameKeys(connection, logger: logger)
            try await PostgresStore.indexApprovalEvents(connection, logger: logger)
        }
        if migration.version == 1 {
            let nameKey = try SecureRandom.bytes(count: 32)
            try await connection.query(
                "INSERT INTO store_secrets (name, value) VALUES ('name_key', \(Data(nameKey)))", logger: logger
            )
        }
        try await connection.query(
            "INSERT INTO stepsign_schema_migrations (version, name) VALUES (\(migration.version), \(migration.name))",
            logger: logger
        )
    }
}
