#if canImport(Glibc)
import Glibc
#endif
internal import CSystemShims

/// The socket file the daemon creates by path (`server.socket`): its mode and group, set
/// without ever following a symbolic link at that path.
///
/// The socket's directory may be one others can write (strict modes refuse that at start,
/// SPEC §7, but sticky directories such as `/tmp` pass). Setting the mode with `chmod(path)`
/// after `bind` would let someone there swap the fresh socket for a symbolic link in between
/// and have the daemon change the mode of a file of their choice. So:
///
/// - the mode is set at creation, through the umask in force while `bind` runs
///   (``binding(mode:_:)``); and
/// - the group is changed through a descriptor of the path itself (`O_PATH | O_NOFOLLOW`),
///   which must be a socket owned by the daemon's uid with the configured mode
///   (``secure(path:mode:group:owner:)``); anything else at the path fails the start.
public enum SocketFileOwnership {
    /// The umask under which `bind` creates a socket with `mode`: Linux creates a socket file
    /// `0777 & ~umask`.
    public static func creationMask(for mode: UInt16) -> mode_t {
        ~mode_t(mode) & 0o777
    }

    /// Runs `bind` with the umask ``creationMask(for:)`` (`mode`) and restores the previous
    /// umask right after, whether `bind` succeeds or throws.
    ///
    /// The umask is the whole process's: anything another thread creates meanwhile gets this
    /// mask too. The daemon binds once, at start, before it serves any request, when no other
    /// thread creates files; other sockets (metrics, the SSH agent) are bound one after
    /// another before it.
    public static func binding<T>(mode: UInt16, _ bind: () async throws -> T) async rethrows -> T {
        let previous = umask(creationMask(for: mode))
        defer { umask(previous) }
        return try await bind()
    }

    /// Checks the socket just bound at `path` and gives it `group` (if not nil), never
    /// following a link: `path` is opened with `O_PATH | O_NOFOLLOW`, and that descriptor must
    /// be a socket (`S_ISSOCK`) owned by `owner` (the daemon's effective uid) whose permission
    /// bits are `mode`; its group is then changed with `fchownat(…, AT_EMPTY_PATH)`.
    ///
    /// - Throws: ``ServerError/socketFile(_:_:)`` naming `path` when something else is there
    ///   (a symbolic link, a regular file, a socket of another uid or with another mode), or
    ///   ``ServerError/system(_:_:_:)`` when a call fails.
    public static func secure(path: String, mode: UInt16, group: gid_t?, owner: uid_t = geteuid()) throws(ServerError) {
        let descriptor = stepsign_open_path_nofollow(path)
        guard descriptor >= 0 else { throw ServerError.system("open", path, errno) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw ServerError.system("fstat", path, errno) }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            let what = info.st_mode & S_IFMT == S_IFLNK ? "a symbolic link, not a socket" : "not a socket"
            throw ServerError.socketFile(path, "is \(what); someone else may have put it there")
        }
        guard info.st_uid == owner else {
            throw ServerError.socketFile(path, "is owned by uid \(info.st_uid), not by the daemon's uid \(owner); "
                                             + "someone else may have put it there")
        }
        let bits = UInt16(info.st_mode & 0o777)
        guard bits == mode & 0o777 else {
            throw ServerError.socketFile(path, "has mode \(octal(bits)), not the configured server.socket_mode \(octal(mode))")
        }
        if let group, info.st_gid != group {
            guard stepsign_fchown_group(descriptor, group) == 0 else {
                throw ServerError.system("fchownat", path, errno)
            }
        }
    }

    /// `mode` as four octal digits ("0660").
    static func octal(_ mode: UInt16) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
