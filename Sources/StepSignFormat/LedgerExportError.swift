/// Why an exported ledger entry cannot become a `LedgerLink`.
public enum LedgerExportError: Error, Sendable, Equatable {
    /// The named hash field of entry `seq` is not 64 hex digits.
    case badHash(seq: Int64, field: String)
}
