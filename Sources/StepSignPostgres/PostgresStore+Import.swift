import Foundation
import PostgresNIO
import StepSignStorage

// Copying another store in (`stepsign admin migrate`, issue 14).
extension PostgresStore {
    /// The tables that must be empty before an import; the schema's other tables hold either
    /// store-wide secrets or short-lived counters.
    static let importedTables = ["users", "password_history", "device_keys", "signing_keys", "ledger", "ledger_checkpoints",
                                 "log_checkpoints", "log_origin", "log_cosignatures", "log_epochs", "group_members",
                                 "approvals", "approval_votes", "approval_events", "idempotency_keys"]

    /// Runs `body` with the import primitives in one transaction: committed only if `body`
    /// returns, rolled back (nothing written) if anything throws.
    ///
    /// First it takes the ledger's and the signing keys' advisory locks (a daemon that appends
    /// or makes a key meanwhile waits for the commit) and refuses with
    /// ``PostgresImportError/notEmpty(tables:)`` a database that holds users, device keys,
    /// signing keys, ledger entries, checkpoints, group memberships, requests for approval or
    /// idempotency keys already (``importedTables``).
    public func importing<T: Sendable>(_ body: (PostgresImport) async throws -> T) async throws -> T {
        do {
            return try await transaction(body)
        } catch let forwarded as ForwardedError {
            throw forwarded.underlying
        }
    }

    private func transaction<T: Sendable>(_ body: (PostgresImport) async throws -> T) async throws -> T {
        try await inTransaction { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.ledgerLockKey))", logger: logger)
            try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.signingKeysLockKey))", logger: logger)
            var occupied: [String] = []
            for table in Self.importedTables {
                let rows = try await connection.query(
                    PostgresQuery(unsafeSQL: "SELECT EXISTS (SELECT 1 FROM \(table))"), logger: logger
                )
                for try await exists in rows.decode(Bool.self) where exists { occupied.append(table) }
            }
            guard occupied.isEmpty else { throw ForwardedError(underlying: PostgresImportError.notEmpty(tables: occupied)) }
            do {
                return try await body(PostgresImport(connection: connection, logger: logger, seal: credentialSeal))
            } catch let error as PSQLError {
                throw error
            } catch {
                // The caller's own errors (reading the source, a mismatch) pass through as they are.
                throw ForwardedError(underlying: error)
            }
        }
    }
}

/// An error of the caller's own code run inside a store call (an import's body, the ledger's
/// checkpoint signer), carried through the store's mapping of server errors.
struct ForwardedError: Error {
    let underlying: any Error
}
