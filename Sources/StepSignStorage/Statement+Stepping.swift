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
        default:
            throw lastError
        }
    }

    /// Whether this statement, with `text` bound to its one parameter (as a C string: up to its
    /// first NUL), has a row; stepped straight through SQLite as ``firstRow(_:)`` is, the binding
    /// cleared before it returns. For the ledger commit's revoked-key check, once per kid of
    /// every batch: GRDB's `fetchOne` with arguments cost about 3 µs a commit (issue 43).
    func hasRow(bindingText text: String) throws -> Bool {
        let statement = sqliteStatement
        return try text.withCString { cString in
            sqlite3_reset(statement)
            defer {
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            }
            // A nil destructor is SQLITE_STATIC: the text outlives the step and is unbound after it.
            guard sqlite3_bind_text(statement, 1, cString, -1, nil) == SQLITE_OK else { throw lastError }
            switch sqlite3_step(statement) {
            case SQLITE_ROW:
                return true
            case SQLITE_DONE:
                return false
            default:
                throw lastError
            }
        }
    }

    /// SQLite's last error on this statement's connection, as GRDB throws its own: a
    /// ``DatabaseError`` with the extended result code (a unique constraint told apart from the
    /// others), SQLite's message and this statement's SQL.
    var lastError: DatabaseError {
        let database = sqlite3_db_handle(sqliteStatement)
        return DatabaseError(resultCode: ResultCode(rawValue: sqlite3_extended_errcode(database)),
                             message: String(cString: sqlite3_errmsg(database)), sql: sql)
    }
}
