/// Why ``PostgresStore/importing(_:)`` refused or undid an import.
public enum PostgresImportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The database already holds data of its own: the named tables have rows. Nothing was
    /// written.
    case notEmpty(tables: [String])
    /// What was written does not read back as what was copied (nothing was committed).
    case mismatch(String)
    /// A copied ledger row does not chain (the database refused its link, or its hash is not the
    /// one of its JWS): the source's chain is broken there (the message names the entry).
    /// Nothing was written.
    case brokenChain(String)
    /// Records of the source fail their seal check (SPEC §5.4): the migration would seal them
    /// under the target's key, so it refuses. Nothing was written.
    case unsealedRecords(users: [String])

    public var description: String {
        switch self {
        case let .notEmpty(tables):
            "the PostgreSQL database is not empty (rows in \(tables.joined(separator: ", "))): "
                + "a migration goes into a fresh database only; nothing was written"
        case let .mismatch(what):
            "the copy does not read back as the source (\(what)); nothing was written"
        case let .brokenChain(message):
            "the source ledger's hash chain is broken: \(message); nothing was written"
        case let .unsealedRecords(users):
            "the source's records of \(users.joined(separator: ", ")) fail their seal check (see admin.auditVerify): "
                + "remove those users (or restore them from a backup) first; nothing was written"
        }
    }
}
