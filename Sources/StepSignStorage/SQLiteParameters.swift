import GRDB
import GRDBSQLite
#if canImport(Glibc)
import Glibc
#endif

/// Values bound straight to a GRDB statement's SQLite parameters, in order (`sqlite3_bind_*`),
/// for the ledger's inserts, run once per row: a `StatementArguments` per row costs an array,
/// a boxed value per column, a `Data` per hash and their releases on the ledger thread
/// (issue 43). Bound as GRDB binds the same values: integers as 64-bit integers, a time as a
/// double, text up to its first NUL, blobs whole.
///
/// Text and blobs are copied into the caller's ``Bytes`` (one buffer a batch reuses for every
/// row) and bound from there without a copy of SQLite's own (`SQLITE_STATIC`), inside the scope
/// that keeps the buffer's address, and unbound before that scope ends: SQLite's copies
/// (`SQLITE_TRANSIENT`) were a `malloc` and a `free` per text and blob, and `String.withCString`
/// one more for every string short enough to be stored inline (a user, a process name). The
/// destructor passed is nil, which is `SQLITE_STATIC` (the C macro is not imported).
struct SQLiteParameters {
    /// The bytes of one row's text and blob values, reused from row to row.
    struct Bytes {
        fileprivate var storage: [UInt8] = []
        /// Each value's parameter, place in `storage`, and kind.
        fileprivate var values: [(index: CInt, offset: Int, count: Int, isText: Bool)] = []

        /// A buffer with room for a ledger row (its JWS is about 1 KB).
        init() {
            storage.reserveCapacity(4096)
            values.reserveCapacity(16)
        }

        private init(empty: Void) {}

        /// No buffer (allocates nothing): what is left behind while the buffer is lent.
        fileprivate static var none: Bytes { Bytes(empty: ()) }
    }

    private let statement: SQLiteStatement
    private var index: CInt = 0
    /// The first binding SQLite refused (a value past its length limit), thrown by
    /// ``execute(_:bytes:_:)`` as GRDB throws its own.
    private var failure: DatabaseError?
    private var bytes: Bytes

    private init(_ statement: SQLiteStatement, bytes: Bytes) {
        self.statement = statement
        self.bytes = bytes
    }

    /// Runs `statement` once with the values `bind` adds: the statement (one of GRDB's cached
    /// ones) is reset with its parameters cleared, bound here, stepped to its end and reset,
    /// straight through SQLite, with SQLite's error thrown as GRDB's (``DatabaseError``, with
    /// the extended result code, so a unique constraint is told apart); the bindings that point
    /// into `bytes` are cleared before it returns or throws. For an `INSERT` inside the ledger
    /// commit's transaction, which no GRDB transaction observer watches (the daemon registers
    /// none): GRDB's execution bookkeeping per row (its arguments, the region it records, the
    /// observation broker) cost about 0.6 µs a signature (issue 43). `Statement.firstRow` reads
    /// the same way.
    static func execute(_ statement: Statement, bytes: inout Bytes, _ bind: (inout SQLiteParameters) -> Void) throws {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        bytes.storage.removeAll(keepingCapacity: true)
        bytes.values.removeAll(keepingCapacity: true)
        // The buffer is lent to `parameters` and given back, never shared: appending to it
        // never copies its storage.
        var parameters = SQLiteParameters(statement.sqliteStatement, bytes: .none)
        swap(&parameters.bytes, &bytes)
        bind(&parameters)
        precondition(Int(parameters.index) == Int(sqlite3_bind_parameter_count(statement.sqliteStatement)),
                     "every parameter of the statement is bound")
        defer { bytes = parameters.bytes }
        if let failure = parameters.failure { throw failure }
        let values = parameters.bytes.values
        try parameters.bytes.storage.withUnsafeBufferPointer { storage in
            defer { sqlite3_clear_bindings(statement.sqliteStatement) }
            for value in values {
                let code: CInt
                switch (value.isText, value.count) {
                case (true, 0):
                    // Empty text is bound as SQLite copies it: a null pointer would bind SQL NULL.
                    code = sqlite3_bind_text(statement.sqliteStatement, value.index, "", 0, Self.transient)
                case (false, 0):
                    code = sqlite3_bind_zeroblob(statement.sqliteStatement, value.index, 0)
                case (true, _):
                    let start = UnsafeRawPointer(storage.baseAddress! + value.offset).assumingMemoryBound(to: CChar.self)
                    code = sqlite3_bind_text(statement.sqliteStatement, value.index, start, CInt(value.count), nil)
                case (false, _):
                    code = sqlite3_bind_blob(statement.sqliteStatement, value.index, storage.baseAddress! + value.offset, CInt(value.count), nil)
                }
                if let refusal = Self.refusal(code, index: value.index) { throw refusal }
            }
            defer { sqlite3_reset(handle) }
            guard sqlite3_step(handle) == SQLITE_DONE else { throw statement.lastError }
        }
    }

    mutating func add(_ value: Int64) {
        index += 1
        check(sqlite3_bind_int64(statement, index, value), index: index)
    }

    mutating func add(_ value: some BinaryInteger) {
        add(Int64(value))
    }

    mutating func add(_ value: Double) {
        index += 1
        check(sqlite3_bind_double(statement, index, value), index: index)
    }

    /// Text, up to its first NUL (as a C string binds).
    mutating func add(_ value: String) {
        index += 1
        let offset = bytes.storage.count
        bytes.storage.append(contentsOf: value.utf8)
        // `memchr`: a generic search for the NUL cost a compare through a witness per byte of
        // every JWS (issue 43).
        let length = bytes.storage.withUnsafeBufferPointer { storage in
            let appended = storage.count - offset
            guard appended > 0, let nul = memchr(storage.baseAddress! + offset, 0, appended) else { return appended }
            return UnsafeRawPointer(nul) - UnsafeRawPointer(storage.baseAddress! + offset)
        }
        bytes.storage.removeSubrange((offset + length)...)
        bytes.values.append((index, offset, length, true))
    }

    mutating func add(blob value: [UInt8]) {
        index += 1
        let offset = bytes.storage.count
        bytes.storage.append(contentsOf: value)
        bytes.values.append((index, offset, value.count, false))
    }

    /// Keeps the first refusal, to be thrown: SQLite refuses a binding when the value is longer
    /// than its limit (`SQLITE_TOOBIG`); a wrong index cannot happen (the count is checked).
    private mutating func check(_ code: CInt, index: CInt) {
        guard failure == nil else { return }
        failure = Self.refusal(code, index: index)
    }

    /// SQLite's refusal of a binding as GRDB's error; nil for `SQLITE_OK`.
    private static func refusal(_ code: CInt, index: CInt) -> DatabaseError? {
        guard code != SQLITE_OK else { return nil }
        return DatabaseError(resultCode: ResultCode(rawValue: code),
                             message: "binding parameter \(index) failed: \(String(cString: sqlite3_errstr(code)))")
    }

    /// `SQLITE_TRANSIENT` (the C macro is not imported): SQLite copies the value.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
}
