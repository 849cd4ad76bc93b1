#if canImport(Glibc)
import Glibc
#endif

extension SQLiteStore {
    /// Why SQLite could not open the database at `path` read-write, with an errno: each of its
    /// files (the database, `-wal`, `-shm`) that exists opened read-write once more, and the
    /// first that fails named with its errno (``StorageError/stateFile(path:errno:)``). Nil when
    /// each opens now: the fault has passed.
    ///
    /// SQLite reports a failed open of a file as `SQLITE_CANTOPEN`, or, when it fell back to
    /// read-only after a read-write open of `-wal` or `-shm` failed, as `SQLITE_READONLY` at the
    /// first write, and keeps no errno. A permission (a file its owner may not write) is a
    /// setting to fix, exit 78; EIO or EMFILE may pass, exit 74 (``TransientFault``). Nothing is
    /// created, and the store's connections are closed by then: closing a descriptor of the file
    /// would drop the locks SQLite holds on it.
    static func readWriteFault(_ path: String) -> StorageError? {
        for file in [path, path + "-wal", path + "-shm"] {
            let fd = Glibc.open(file, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
            if fd >= 0 {
                Glibc.close(fd)
                continue
            }
            let code = errno
            if code != ENOENT { return .stateFile(path: file, errno: code) }
        }
        return nil
    }
}
