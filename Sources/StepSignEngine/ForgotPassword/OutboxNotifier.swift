#if canImport(Glibc)
import Glibc
#endif
import NIOPosix
import StepSignSystem

/// The notifier used when `forgot_password.notifier` is empty: appends each message as one
/// JSON line to `<state_dir>/outbox/<user>`, for an operator or a mail relay to pick up.
///
/// - The directory is created with mode 0700 (and set to 0700 if it exists); it is opened
///   with `O_NOFOLLOW`, so a symlink put in its place is refused, and the file is opened
///   relative to it.
/// - The file is opened `O_WRONLY|O_APPEND|O_CREAT|O_NOFOLLOW|O_CLOEXEC|O_NONBLOCK` with mode
///   0600 and set to 0600; anything but a regular file is refused (`O_NONBLOCK` keeps a FIFO
///   planted there from blocking the open).
/// - The line is written under an exclusive `flock`, so concurrent deliveries never
///   interleave (a failed write is cut off again), then the file and the directory are
///   `fsync`ed.
/// - The user ID becomes a file name through `OutboxFileName.escape` (`/`, `..` and the like
///   are percent-escaped).
///
/// The blocking work runs on `NIOThreadPool.singleton`, off the cooperative pool.
public struct OutboxNotifier: CodeNotifier {
    /// The outbox directory, normally `<state_dir>/outbox`.
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    /// The outbox directory of `stateDirectory`.
    public init(stateDirectory: String) {
        self.init(directory: (stateDirectory.hasSuffix("/") ? stateDirectory : stateDirectory + "/") + "outbox")
    }

    /// The path the messages for `user` go to, or nil if the user ID has no usable file name.
    public func path(for user: String) -> String? {
        OutboxFileName.escape(user).map { directory + "/" + $0 }
    }

    public func deliver(_ message: some NotifierMessage) async throws {
        guard let name = OutboxFileName.escape(message.user) else {
            throw OutboxNotifierError.unusableUserName(message.user)
        }
        let directory = self.directory
        let line = message.jsonLine
        try await NIOThreadPool.singleton.runIfActive {
            try Self.append(line, directory: directory, name: name)
        }
    }

    private static func append(_ line: [UInt8], directory: String, name: String) throws(OutboxNotifierError) {
        let path = directory + "/" + name
        if mkdir(directory, 0o700) != 0, errno != EEXIST { throw .system(SystemError("mkdir", path: directory)) }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard directoryFD >= 0 else { throw .system(SystemError("open", path: directory)) }
        defer { close(directoryFD) }
        guard fchmod(directoryFD, 0o700) == 0 else { throw .system(SystemError("fchmod", path: directory)) }

        let fd = openat(directoryFD, name, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard fd >= 0 else { throw .system(SystemError("open", path: path)) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .system(SystemError("fstat", path: path)) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .notARegularFile(path: path) }
        guard fchmod(fd, 0o600) == 0 else { throw .system(SystemError("fchmod", path: path)) }

        guard retryingOnEINTR({ flock(fd, LOCK_EX) }) == 0 else { throw .system(SystemError("flock", path: path)) }
        guard fstat(fd, &status) == 0 else { throw .system(SystemError("fstat", path: path)) }
        let sizeBefore = status.st_size
        do {
            try SecureFile.writeAll(line, to: fd, path: path)
        } catch {
            _ = ftruncate(fd, sizeBefore)  // drop a partial line; the write's error is what counts
            throw .system(error)
        }
        guard fsync(fd) == 0 else { throw .system(SystemError("fsync", path: path)) }
        guard fsync(directoryFD) == 0 else { throw .system(SystemError("fsync", path: directory)) }
    }
}
