/// The SQLSTATE codes the store acts on (PostgreSQL, Appendix A), by name.
enum SQLState {
    /// 42501: the role may not do that (the least-privilege role of `docs/sql/roles.sql`).
    static let insufficientPrivilege = "42501"
    /// 23505: a unique index refused a row (a signature ID already in the ledger).
    static let uniqueViolation = "23505"
    /// 23000: the ledger's rules refused a row that does not chain.
    static let integrityConstraintViolation = "23000"
    /// 40P01: the server broke a deadlock by aborting this transaction.
    static let deadlockDetected = "40P01"
    /// 40001: the server aborted this transaction to keep it serializable.
    static let serializationFailure = "40001"
    /// 55P03: `NOWAIT` found the lock taken.
    static let lockNotAvailable = "55P03"
    /// 3D000: no such database.
    static let invalidCatalogName = "3D000"
    /// Class 28: the login was refused.
    static let invalidAuthorizationClass = "28"
    /// Class 08: the connection failed.
    static let connectionExceptionClass = "08"
    /// 57P01-57P03: the server is shutting down or cannot accept connections now.
    static let serverShutdownPrefix = "57P"
    /// Class 53: the server ran out of a resource (connections, memory, disk).
    static let insufficientResourcesClass = "53"
    /// XX001: data found corrupted (v8's upgrade: a ledger with a gap, or a tree lacking a hash).
    static let dataCorrupted = "XX001"
    /// SSK01 (stepsign's own): a ledger row or checkpoint signed with a revoked key; the key's
    /// id is the error's detail.
    static let revokedSigningKey = "SSK01"
}
