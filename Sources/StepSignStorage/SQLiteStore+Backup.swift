#if canImport(Glibc)
import Glibc
#endif
import GRDB
import StepSignSystem

extension SQLiteStore: OnlineBackupStore {
    /// SQLite's online backup API in one step: the copy is the database as one read transaction
    /// sees it, taken on a reader connection while the ledger writer goes on (WAL). The copy is
    /// then one file (rollback journal, not WAL), passes `PRAGMA integrity_check`, and is
    /// `fsync`ed with its directory before this returns.
    public func backup(to path: String) async throws -> StoreBackup {
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode_t(0o600))
        guard fd >= 0 else { throw StorageError.stateFile(path: path, errno: errno) }
        Glibc.close(fd)
        do {
            let copy = try DatabaseQueue(path: path)
            defer { try? copy.close() }
            // On GRDB's reader queue, not the cooperative pool: a large database takes a while.
            try await pool.read { source in
                try copy.writeWithoutTransaction { destination in
                    try source.backup(to: destination)
                }
            }
            let (size, head) = try await copy.writeWithoutTransaction { db -> (Int64, [UInt8]) in
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
                let check = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                guard check == ["ok"] else {
                    throw StorageError.malformedRow(table: "backup", detail: check.prefix(3).joined(separator: "; "))
                }
                return try Self.readLedgerTail(db)
            }
            try copy.close()
            try SecureFile.sync(path)
            return StoreBackup(bytes: try fileSize(path), ledgerSize: size, ledgerHeadHash: head)
        } catch {
            unlink(path)
            unlink(path + "-journal")
            throw error
        }
    }
}

/// The size of the file at `path`. (Outside the class so that `stat` means the C function.)
private func fileSize(_ path: String) throws -> Int64 {
    var info = stat()
    guard stat(path, &info) == 0 else { throw StorageError.stateFile(path: path, errno: errno) }
    return Int64(info.st_size)
}
