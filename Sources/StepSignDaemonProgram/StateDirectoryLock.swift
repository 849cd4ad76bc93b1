#if canImport(Glibc)
import Glibc
#endif
import StepSignStorage
import StepSignSystem

/// The lock a running stepsignd holds on its state directory (issue 39), as PostgreSQL's
/// `postmaster.pid`: `STATE_DIR/stepsignd.pid`, 0600, `flock`ed for as long as the process
/// lives, holding its pid.
///
/// Without it a second daemon on the same state directory started, took over the socket, and
/// removed it when stopped, leaving the first running but unreachable; two with different
/// sockets both signed from one database and one keyring. The kernel releases an `flock` when
/// the process ends however it ends, so a daemon killed with SIGKILL (or a crash) never blocks
/// the next start, and the file left behind means nothing by itself. The descriptor is
/// close-on-exec: programs the daemon starts (the notifier) do not hold the lock.
final class StateDirectoryLock {
    /// The lock file's name in the state directory.
    static let fileName = "stepsignd.pid"

    /// Why the lock could not be taken, in words, with the failed call's errno and path when a
    /// system call failed (the daemon prints it and exits 78, or 74 for a fault that may pass:
    /// ``TransientErrno``).
    struct Failure: Error, CustomStringConvertible, ErrnoCarrying {
        var description: String
        var carriedErrno: Int32?
        var carriedPath: String?

        init(description: String, errno: Int32? = nil, path: String? = nil) {
            self.description = description
            carriedErrno = errno
            carriedPath = path
        }
    }

    private let descriptor: Int32

    /// Makes the state directory (0700) if it is missing, then takes its lock: what the daemon
    /// does first in its state directory, before the socket is created or the store opened.
    static func take(stateDirectory: String) throws(Failure) -> StateDirectoryLock {
        do {
            try SQLiteStore.ensureStateDirectory(stateDirectory)
        } catch let StorageError.stateDirectory(path, code) {
            let reason = code == ENOTDIR ? "it is not a directory" : String(cString: strerror(code))
            let hint = code == ENOENT ? " (the directory it goes in must exist: create it, or set server.state_dir)" : ""
            throw Failure(description: "cannot make the state directory \(path): \(reason)\(hint)", errno: code, path: path)
        } catch {
            throw Failure(description: "cannot make the state directory \(stateDirectory): \(error)")
        }
        return try StateDirectoryLock(stateDirectory: stateDirectory)
    }

    /// Takes the lock on the existing `stateDirectory` without waiting and writes this
    /// process's pid into the file; throws naming the holder's pid when another process holds it.
    init(stateDirectory: String) throws(Failure) {
        let path = (stateDirectory.hasSuffix("/") ? stateDirectory : stateDirectory + "/") + Self.fileName
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode_t(0o600))
        guard fd >= 0 else {
            let error = SystemError("open", path: path)
            throw Failure(description: "cannot open the state directory's lock \(error)", errno: error.errno, path: path)
        }
        guard retryingOnEINTR({ flock(fd, LOCK_EX | LOCK_NB) }) == 0 else {
            let code = errno
            let holder = Self.pid(in: fd)
            close(fd)
            guard code == EWOULDBLOCK else {
                throw Failure(description: "cannot lock \(path): \(String(cString: strerror(code)))", errno: code, path: path)
            }
            let who = holder.map { "another stepsignd (pid \($0))" } ?? "another stepsignd (its pid is not written yet)"
            throw Failure(description: """
                \(who) holds the state directory \(stateDirectory) (\(path) is locked): \
                one daemon per state directory; stop that one first, or give this one a state directory of its own
                """)
        }
        let line = Array("\(getpid())\n".utf8)
        guard ftruncate(fd, 0) == 0,
              line.withUnsafeBytes({ pwrite(fd, $0.baseAddress, $0.count, 0) }) == line.count else {
            let error = SystemError("write", path: path)
            close(fd)
            throw Failure(description: "cannot write the state directory's lock: \(error)", errno: error.errno, path: path)
        }
        descriptor = fd
    }

    /// Releases the lock (the process's end does too).
    deinit {
        close(descriptor)
    }

    /// The pid written in the lock file open at `fd`, if it holds one.
    private static func pid(in fd: Int32) -> Int32? {
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: bytes[0..<count], as: UTF8.self)
        return Int32(text.split(separator: "\n").first ?? "").flatMap { $0 > 0 ? $0 : nil }
    }
}
