/// Failures of the PostgreSQL backend itself (the data's own errors are ``StorageError``s).
///
/// No case carries a password or a query's bound values.
public enum PostgresStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The database's schema is newer than this daemon knows (a newer daemon migrated it).
    /// The daemon refuses to start (exit 78) rather than misread it.
    case schemaTooNew(found: Int, supported: Int)
    /// The schema is older than this daemon and the daemon's role may not migrate it (the
    /// least-privilege role of docs/sql/roles.sql owns nothing): run the daemon once as the
    /// owner role. Refused at start (exit 78); nothing was changed.
    case migrationNotPermitted(found: Int, needed: Int)
    /// The server cannot be reached, or the connection broke: nothing was changed (a ledger
    /// batch whose `COMMIT` lost its answer is looked up first; if that cannot be done in time
    /// the store throws `StorageError.ledgerCommitOutcomeUnknown` instead).
    case unavailable(String)
    /// The server refused a statement: its SQLSTATE and message.
    case server(sqlState: String, message: String)
    /// TLS with the server failed in a way a retry cannot fix: the server offers no TLS, its
    /// certificate does not verify against `tls_ca_file` (or the system's roots) or is not
    /// for `host`, or the handshake finds nothing in common.
    case tls(String)
    /// The password file cannot be used.
    case passwordFile(path: String, reason: String)
    /// A configuration value cannot work.
    case configuration(String)
    /// The store was closed.
    case closed
    /// The database's records have never been sealed with a key (SPEC §5.4) and this role may
    /// not record one (`store_secrets` is the owner's): run stepsignd once as the owner role.
    case sealNotPermitted

    /// The server refused the daemon's login (SQLSTATE class 28) or has no such database
    /// (3D000): the settings, or the server's, must change; a retry cannot help.
    public var refusesLoginOrDatabase: Bool {
        guard case let .server(sqlState, _) = self else { return false }
        return sqlState.hasPrefix(SQLState.invalidAuthorizationClass) || sqlState == SQLState.invalidCatalogName
    }

    public var description: String {
        switch self {
        case let .schemaTooNew(found, supported):
            "the PostgreSQL schema is at version \(found), newer than this stepsignd supports (\(supported)): upgrade stepsignd"
        case let .migrationNotPermitted(found, needed):
            "the PostgreSQL schema is at version \(found) and this stepsignd needs \(needed), but its role may not migrate it: "
                + "run stepsignd once as the owner role (docs/scale-out.md), then again as this one"
        case let .unavailable(reason):
            "PostgreSQL is unavailable: \(reason)"
        case let .server(sqlState, message):
            "PostgreSQL refused a statement (SQLSTATE \(sqlState)): \(message)"
        case let .tls(reason):
            "TLS with PostgreSQL failed: \(reason)"
        case let .passwordFile(path, reason):
            "the PostgreSQL password file \(path) \(reason)"
        case let .configuration(reason):
            "PostgreSQL configuration: \(reason)"
        case .closed:
            "the PostgreSQL store is closed"
        case .sealNotPermitted:
            "the credential records of this database were never sealed and this role may not record the seal key's "
                + "check value: run stepsignd once as the owner role (docs/scale-out.md), then again as this one"
        }
    }
}
