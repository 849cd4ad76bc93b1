import GRDB
import GRDBSQLite

// Internal hooks for the tests (`@testable import`); not part of the store's interface.
extension SQLiteStore {
    /// Runs raw SQL in a write transaction, the way someone with write access to the file
    /// could tamper with it.
    func executeRawSQL(_ sql: String) async throws {
        try await pool.write { db in
            try db.execute(sql: sql)
        }
    }

    /// Seals `user`'s record as it is stored now, as if the daemon had made the change: for a
    /// test that moves a stored time (a password's age) where the daemon has no clock to turn.
    func resealForTesting(_ user: String) throws {
        try pool.write { db in try self.reseal(db, user) }
    }

    /// The value of `PRAGMA name` on the writer connection.
    func writerPragma(_ name: String) async throws -> String? {
        try await pool.writeWithoutTransaction { db in
            try String.fetchOne(db, sql: "PRAGMA \(name)")
        }
    }

    /// Lowers the writer connection's limit on a text or blob's length (`SQLITE_LIMIT_LENGTH`):
    /// for a test of a value SQLite refuses to bind.
    func limitValueLengthForTesting(_ bytes: Int32) async throws {
        try await pool.writeWithoutTransaction { db in
            _ = sqlite3_limit(db.sqliteConnection, SQLITE_LIMIT_LENGTH, bytes)
        }
    }
}
