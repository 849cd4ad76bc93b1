#if canImport(Glibc)
import Glibc
#endif
import GRDB
import StepSignSystem

/// A failure that a later try may not meet again: a system call under it failed with an errno
/// of ``TransientErrno`` (EIO, ENOSPC, EMFILE, …), or SQLite reported the same kind of fault.
/// stepsignd's start exits 74 (EX_IOERR) on one, which systemd restarts, instead of 78
/// (EX_CONFIG), which it does not (docs/decisions.md, "A transient fault at start exits 74").
///
/// SQLite's faults of this kind: `SQLITE_IOERR` (a read, write, sync, lock or the shared
/// memory file failed), `SQLITE_FULL`, `SQLITE_NOMEM`, `SQLITE_BUSY` and `SQLITE_LOCKED`
/// (another process holds the database for a while), and `SQLITE_CANTOPEN` and
/// `SQLITE_READONLY` as ``SQLiteStore/open(path:seal:sealUnsealed:)`` lets them through: it
/// opens each file read-write again after one, and reports a failure there with its errno
/// (a permission: none of these), so one that reaches here failed to open a file that opens
/// now. A file that is not a database, or a schema too new, is none of these.
package struct TransientFault: Sendable, CustomStringConvertible {
    /// The file the fault was about, when the error names it (SQLite's errors do not).
    package var path: String?
    /// The fault in words: the errno's text ("Input/output error") or SQLite's ("disk I/O error").
    package var reason: String

    /// The transient fault under `error`, or nil when it is not one.
    package init?(_ error: any Error) {
        switch error {
        case let error as any ErrnoCarrying:
            guard let code = error.carriedErrno, TransientErrno.contains(code) else { return nil }
            path = error.carriedPath
            reason = String(cString: strerror(code))
        case let error as DatabaseError:
            switch error.resultCode {
            case .SQLITE_IOERR, .SQLITE_FULL, .SQLITE_NOMEM, .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_CANTOPEN, .SQLITE_READONLY:
                path = nil
                reason = error.message ?? "\(error.resultCode)"
            default:
                return nil
            }
        default:
            return nil
        }
    }

    package var description: String { path.map { "\($0): \(reason)" } ?? reason }
}
