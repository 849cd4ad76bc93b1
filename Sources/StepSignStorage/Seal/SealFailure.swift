/// Why a user's credential record may not be used (SPEC §5.4, sealed credential records): the
/// daemon answers for such a user as for a blocked one, logs at critical, and
/// `admin.auditVerify` lists the record.
public enum SealFailure: Sendable, Hashable, CustomStringConvertible {
    /// The record has no seal: it was written by hand (or by a version before seals, after
    /// the database had been sealed once).
    case missing
    /// The seal does not match the record: a field was edited in the database.
    case mismatch
    /// The record's password history or device keys are not those it was sealed with: rows
    /// were added, removed or edited beside it.
    case partsChanged
    /// The record is sealed, but bound to log index `recordIndex` while the user's latest
    /// event in the log is at `latestIndex` (-1: none): an older sealed copy was put back (a
    /// rollback), or events were taken out of the log.
    case rolledBack(recordIndex: Int64, latestIndex: Int64)

    public var description: String {
        switch self {
        case .missing: "the record has no seal"
        case .mismatch: "the record does not match its seal"
        case .partsChanged: "the record's password history or device keys do not match its seal"
        case let .rolledBack(record, latest):
            "the record is sealed at log index \(record) but the user's latest event is at \(latest) (a rolled-back copy)"
        }
    }

    /// A short name for replies and logs: `missing`, `mismatch`, `partsChanged`, `rolledBack`.
    public var name: String {
        switch self {
        case .missing: "missing"
        case .mismatch: "mismatch"
        case .partsChanged: "partsChanged"
        case .rolledBack: "rolledBack"
        }
    }
}
