import GRDB
import GRDBSQLite

/// Values bound straight to a GRDB statement's SQLite parameters, in order (`sqlite3_bind_*`),
/// for the ledger's inserts, run once per row: a `StatementArguments` per row costs an array,
/// a boxed value per column, a `Data` per hash and their releases on the ledger thread
/// (issue 43). Bound as GRDB binds the same values: integers as 64-bit integers, a time as a
/// double, text up to its first NUL, blobs whole; SQLite copies each (`SQLITE_TRANSIENT`).
struct SQLiteParameters {
    private let statement: SQLiteStatement
    private var index: CInt = 0
    /// The first binding SQLite refused (out of memory for its copy, a value past its length
    /// limit), thrown by ``execute(_:_:)`` as GRDB throws its own.
    private var failure: DatabaseError?

    private init(_ statement: SQLiteStatement) {
        self.statement = statement
    }

    /// Runs `statement` once with the values `bind` adds, through GRDB (its execution, its
    /// errors as ``DatabaseError``, its statement cache and transaction bookkeeping): the
    /// statement is reset with its parameters cleared (empty unchecked arguments), bound here,
    /// then executed without arguments, which keeps the bindings.
    static func execute(_ statement: Statement, _ bind: (inout SQLiteParameters) -> Void) throws {
        statement.setUncheckedArguments(StatementArguments())
        var parameters = SQLiteParameters(statement.sqliteStatement)
        bind(&parameters)
        precondition(Int(parameters.index) == Int(sqlite3_bind_parameter_count(statement.sqliteStatement)),
                     "every parameter of the statement is bound")
        if let failure = parameters.failure { throw failure }
        try statement.execute()
    }

    mutating func add(_ value: Int64) {
        index += 1
        check(sqlite3_bind_int64(statement, index, value))
    }

    mutating func add(_ value: some BinaryInteger) {
        add(Int64(value))
    }

    mutating func add(_ value: Double) {
        index += 1
        check(sqlite3_bind_double(statement, index, value))
    }

    mutating func add(_ value: String) {
        index += 1
        let code = value.withCString { sqlite3_bind_text(statement, index, $0, -1, Self.transient) }
        check(code)
    }

    mutating func add(blob bytes: [UInt8]) {
        index += 1
        let code = bytes.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, CInt($0.count), Self.transient) }
        check(code)
    }

    /// Keeps the first refusal, for ``execute(_:_:)`` to throw: SQLite refuses a binding when it
    /// cannot copy the value (`SQLITE_NOMEM`) or the value is longer than its limit
    /// (`SQLITE_TOOBIG`); a wrong index cannot happen (the count is checked).
    private mutating func check(_ code: CInt) {
        guard code != SQLITE_OK, failure == nil else { return }
        failure = DatabaseError(resultCode: ResultCode(rawValue: code),
                                message: "binding parameter \(index) failed: \(String(cString: sqlite3_errstr(code)))")
    }

    /// `SQLITE_TRANSIENT` (the C macro is not imported): SQLite copies the value.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
}
