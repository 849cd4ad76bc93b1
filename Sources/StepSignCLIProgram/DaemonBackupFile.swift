#if canImport(Glibc)
import Glibc
#endif

/// The backup file that `admin.backup`'s reply names, opened only where stepsignd makes them
/// (issue 39): `STATE_DIR/backups/stepsign-….sqlite`, the daemon's own backup directory.
///
/// `stepsign admin backup` runs as root and copies, then removes, the file the reply names: a
/// daemon that is not stepsignd (another program on the socket) or a compromised one must not
/// get root to read or unlink anything else. So the path is taken only if it is absolute and
/// has no `.` or `..`; every directory on it is opened without following a symbolic link;
/// the file is named `stepsign-*.sqlite` in a directory named `backups`; that directory and the
/// state directory above it belong to one user and no one else may write them; and the file
/// is a plain file of that user with no other link. Whatever is then copied or removed is a
/// file its owner could have read or removed itself. The descriptors opened here are the ones
/// the copy reads and the removal uses, so nothing can be swapped in between.
/// (docs/decisions.md, "The backup CLI takes only the daemon's own backup file".)
final class DaemonBackupFile {
    /// A reason to refuse the named path, in words.
    struct Refusal: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The path as the daemon named it.
    let path: String
    /// The file, open for reading.
    let descriptor: Int32
    private let directory: Int32
    private let name: String

    /// Opens the file at `path` if it is in the daemon's own backup directory; throws a
    /// ``Refusal`` saying why not otherwise.
    init(opening path: String) throws(Refusal) {
        self.path = path
        guard path.hasPrefix("/") else { throw Refusal("it is not an absolute path") }
        let components = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        guard !components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            throw Refusal("it has an empty, \".\" or \"..\" component")
        }
        guard components.count >= 3, let name = components.last,
              name.hasPrefix("stepsign-"), name.hasSuffix(".sqlite"), components[components.count - 2] == "backups" else {
            throw Refusal("stepsignd makes its backups as backups/stepsign-….sqlite in its state directory")
        }
        // Walk from / one directory at a time, never through a symbolic link; keep the last two.
        var current = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard current >= 0 else { throw Refusal("cannot open /: \(Self.reason(errno))") }
        var parent: Int32 = -1
        var walked = ""
        for component in components.dropLast() {
            walked += "/" + component
            let next = openat(current, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let error = errno
            if parent >= 0 { close(parent) }
            parent = current
            guard next >= 0 else {
                close(parent)
                throw Refusal(error == ELOOP || error == ENOTDIR
                    ? "\(walked) is a symbolic link or not a directory" : "cannot open \(walked): \(Self.reason(error))")
            }
            current = next
        }
        let backups = current, state = parent
        defer { close(state) }
        do throws(Refusal) {
            var stateInfo = stat(), backupsInfo = stat()
            guard fstat(state, &stateInfo) == 0, fstat(backups, &backupsInfo) == 0 else {
                throw Refusal("cannot read the directories' owners: \(Self.reason(errno))")
            }
            let owner = backupsInfo.st_uid
            guard stateInfo.st_uid == owner else {
                throw Refusal("the backup directory and the state directory above it belong to different users")
            }
            guard stateInfo.st_mode & 0o022 == 0, backupsInfo.st_mode & 0o022 == 0 else {
                throw Refusal("the state directory or its backup directory may be written by group or others")
            }
            let file = openat(backups, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard file >= 0 else {
                let error = errno
                throw Refusal(error == ELOOP ? "it is a symbolic link" : "cannot open it: \(Self.reason(error))")
            }
            var info = stat()
            guard fstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == owner, info.st_nlink == 1 else {
                close(file)
                throw Refusal("it is not a plain file of the backup directory's owner with one link")
            }
            self.descriptor = file
        } catch {
            close(backups)
            throw error
        }
        self.directory = backups
        self.name = name
    }

    /// Removes the file from the backup directory it was opened in (unlinks that name there,
    /// never a path looked up again).
    func remove() {
        unlinkat(directory, name, 0)
    }

    deinit {
        close(descriptor)
        close(directory)
    }

    private static func reason(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
