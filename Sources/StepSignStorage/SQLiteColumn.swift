import GRDB
import GRDBSQLite

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
