#if canImport(Glibc)
import Glibc
#endif
import GRDB
import StepSignSystem

extension StorageError {
    /// Whether `error` means the filesystem of the state directory has no space left: SQLite's
    /// `SQLITE_FULL` (a write that needed a page the disk does not have; the transaction was
    /// rolled back whole), or a file write that failed with `ENOSPC` or `EDQUOT`. Nothing was
    /// written, and the same request can succeed once space is freed.
    public static func meansNoSpace(_ error: any Error) -> Bool {
        switch error {
        case let error as DatabaseError:
            return error.resultCode == .SQLITE_FULL
        case let error as SystemError:
            return error.errno == ENOSPC || error.errno == EDQUOT
        default:
            return false
        }
    }
}
