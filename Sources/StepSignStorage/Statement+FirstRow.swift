import GRDB
import GRDBSQLite

extension Statement {
    /// Steps this statement (which takes no arguments) once and reads its first row with
    /// `read`, straight from SQLite's columns; nil if it has no row. SQLite's errors are thrown
    /// as GRDB's (``DatabaseError``).
    ///
    /// For the reads the ledger's commit makes in its own transaction on every batch (the tail,
    /// the tree's last node): GRDB's `Row` and cursors cost about 1 µs of every signature's CPU
    /// there (issue 43), for two integers and a hash.
    func firstRow<T>(_ read: (SQLiteStatement) throws -> T) throws -> T? {
        let statement = sqliteStatement
        sqlite3_reset(statement)
        defer { sqlite3_reset(statement) }
        switch sqlite3_step(statement) {
        case SQLITE_ROW:
            return try read(statement)
        case SQLITE_DONE:
            return nil
        case let code:
            throw DatabaseError(resultCode: ResultCode(rawValue: code),
                                message: String(cString: sqlite3_errmsg(sqlite3_db_handle(statement))), sql: sql)
        }
    }
}
