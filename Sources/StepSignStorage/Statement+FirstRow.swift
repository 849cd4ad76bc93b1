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

/// Reading one column of the row a statement is on, as GRDB decodes the same types.
enum SQLiteColumn {
    /// An integer column; nil for NULL; a malformed row for any other type.
    static func int64(_ statement: SQLiteStatement, _ index: CInt, table: String) throws -> Int64? {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_NULL: return nil
        case SQLITE_INTEGER: return sqlite3_column_int64(statement, index)
        default: throw StorageError.malformedRow(table: table, detail: "column \(index) is not an integer")
        }
    }

    /// A blob (or text) column's bytes; a malformed row for NULL or a number.
    static func bytes(_ statement: SQLiteStatement, _ index: CInt, table: String) throws -> [UInt8] {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_BLOB, SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(statement, index))
            guard count > 0, let start = sqlite3_column_blob(statement, index) else { return [] }
            return Array(UnsafeRawBufferPointer(start: start, count: count))
        default:
            throw StorageError.malformedRow(table: table, detail: "column \(index) is not a blob")
        }
    }
}
