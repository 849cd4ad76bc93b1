/// The INSERT of 1, 2, 4, 8 or 16 rows into one table (`VALUES (?, …), (?, …)`), for the
/// ledger's commit: a batch's tree nodes go in by the fewest such statements (12 rows: 8, then
/// 4), each prepared once in the statement cache. One statement per row was most of a tree
/// node's cost (issue 43); for entries, whose rows cost more than their statements, it measured
/// no faster and is not used.
struct SQLiteRowsInsert {
    /// The row counts there is a statement for, largest first.
    private static let counts = [16, 8, 4, 2, 1]

    private let statements: [Int: String]

    init(table: String, columns: String, columnCount: Int) {
        let row = "(" + Array(repeating: "?", count: columnCount).joined(separator: ", ") + ")"
        statements = Dictionary(uniqueKeysWithValues: Self.counts.map { count in
            (count, "INSERT INTO \(table) (\(columns)) VALUES " + Array(repeating: row, count: count).joined(separator: ", "))
        })
    }

    /// How many of `remaining` rows the next statement inserts: the largest count that is not more.
    static func rowsPerStatement(remaining: Int) -> Int {
        counts.first { $0 <= remaining } ?? 1
    }

    /// The SQL that inserts `count` rows (one of the counts above).
    func sql(rows count: Int) -> String {
        statements[count]!
    }
}
