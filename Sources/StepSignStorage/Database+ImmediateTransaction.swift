import GRDB

extension Database {
    /// `inTransaction(.immediate)`, with its `BEGIN` and `COMMIT` prepared once: GRDB runs them
    /// as SQL text, parsed and prepared by SQLite on every transaction, about 1 µs of every
    /// signature's CPU in the ledger's commit (issue 43). The same rules: an error in
    /// `operations` (or a `.rollback`) rolls back and the first error is thrown; a failed commit
    /// is rolled back (``rollback()`` is a no-op when SQLite already did).
    func inImmediateTransaction(_ operations: () throws -> TransactionCompletion) throws {
        try cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
        var firstError: (any Error)?
        do {
            switch try operations() {
            case .commit:
                try cachedStatement(sql: "COMMIT TRANSACTION").execute()
                return
            case .rollback:
                break
            }
        } catch {
            firstError = error
        }
        do {
            try rollback()
        } catch {
            if firstError == nil { firstError = error }
        }
        if let firstError { throw firstError }
    }
}
