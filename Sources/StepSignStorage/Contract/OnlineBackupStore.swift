/// A store that copies itself while serving (issue 27): SQLite's online backup. PostgreSQL
/// has its own (`pg_dump`), run by the operator against the server.
public protocol OnlineBackupStore: Sendable {
    /// Copies the whole database into a new file at `path` (mode 0600, which must not exist),
    /// as one consistent snapshot taken while writers go on, checks the copy, makes it durable
    /// and says what it holds. Throws, leaving no file at `path`, if any step fails.
    func backup(to path: String) async throws -> StoreBackup
}

/// What an online backup holds.
public struct StoreBackup: Sendable, Equatable {
    /// The copy's size in bytes.
    public var bytes: Int64
    /// Its ledger's last sequence number (the log's size), 0 for an empty ledger.
    public var ledgerSize: Int64
    /// Its ledger's last entry hash (32 zero bytes for an empty ledger).
    public var ledgerHeadHash: [UInt8]

    public init(bytes: Int64, ledgerSize: Int64, ledgerHeadHash: [UInt8]) {
        self.bytes = bytes
        self.ledgerSize = ledgerSize
        self.ledgerHeadHash = ledgerHeadHash
    }
}
