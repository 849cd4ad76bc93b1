#if canImport(Glibc)
import Glibc
#endif

/// The errnos of a failed system call that a later try may not meet again: the device or the
/// filesystem failed (`EIO`), ran out of space or quota (`ENOSPC`, `EDQUOT`), the host ran out
/// of memory or descriptors (`ENOMEM`, `ENOBUFS`, `EMFILE`, `ENFILE`), or something held a
/// resource for a while (`EAGAIN`, `EBUSY`, `EINTR`, `ETIMEDOUT`).
///
/// Not a missing file, a permission, a read-only filesystem or a file of the wrong kind: those
/// stay until someone changes them. stepsignd's start exits 74 (EX_IOERR) on the first kind,
/// which systemd restarts, and 78 (EX_CONFIG) on the second, which it does not (docs/decisions.md,
/// "A transient fault at start exits 74").
package enum TransientErrno {
    /// Whether `code` is one of them.
    package static func contains(_ code: Int32) -> Bool {
        switch code {
        case EIO, ENOSPC, EDQUOT, ENOMEM, ENOBUFS, EMFILE, ENFILE, EAGAIN, EBUSY, EINTR, ETIMEDOUT: true
        default: false
        }
    }
}
