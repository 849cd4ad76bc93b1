#if canImport(Glibc)
import Glibc
#endif

/// Files that hold secrets: created with a fixed mode, written whole, made durable.
public enum SecureFile {
    /// Writes `bytes` to `path` atomically: a temporary file with `mode` in the same directory,
    /// `fsync`, `rename`, then `fsync` of the directory, so a crash leaves the old file or the
    /// new one, never half of one.
    public static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600) throws(SystemError) {
        let temporary = path + ".tmp"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw SystemError("open", path: temporary) }
        var failure: SystemError?
        do { try writeAll(bytes, to: fd, path: temporary) } catch { failure = error }
        if failure == nil, fchmod(fd, mode) != 0 { failure = SystemError("fchmod", path: temporary) }
        if failure == nil, fsync(fd) != 0 { failure = SystemError("fsync", path: temporary) }
        close(fd)
        if let failure {
            unlink(temporary)
            throw failure
        }
        guard rename(temporary, path) == 0 else {
            let error = SystemError("rename", path: path)
            unlink(temporary)
            throw error
        }
        try syncDirectory(of: path)
    }

    /// Moves the file at `source` to `path` (same directory), replacing it, and makes the move
    /// durable (`fsync` of the directory).
    public static func move(_ source: String, to path: String) throws(SystemError) {
        guard rename(source, path) == 0 else { throw SystemError("rename", path: path) }
        try syncDirectory(of: path)
    }

    /// Writes all of `bytes` to `fd`, retrying short writes and EINTR.
    public static func writeAll(_ bytes: [UInt8], to fd: Int32, path: String) throws(SystemError) {
        var failure: SystemError?
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = retryingOnEINTR { write(fd, buffer.baseAddress! + offset, buffer.count - offset) }
                if written < 0 {
                    failure = SystemError("write", path: path)
                    return
                }
                offset += written
            }
        }
        if let failure { throw failure }
    }

    /// Reads a whole file.
    public static func read(_ path: String) throws(SystemError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open", path: path) }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = retryingOnEINTR { chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
            if count < 0 {
                throw SystemError("read", path: path)
            }
            if count == 0 { return out }
            out.append(contentsOf: chunk[0..<count])
        }
    }

    /// Whether `path` exists: false only when it does not (`ENOENT`); any other failure of the
    /// check (EIO, EACCES, …) is thrown, not taken for "no file" (a key made again over one the
    /// disk failed to show).
    public static func exists(_ path: String) throws(SystemError) -> Bool {
        if access(path, F_OK) == 0 { return true }
        let code = errno
        if code == ENOENT { return false }
        throw SystemError("access", path: path, errno: code)
    }

    /// The bytes of `path`, or nil when there is no such file (`ENOENT`); any other failure,
    /// of the open as of the read, is thrown (an `access(2)` check first would take an EIO for
    /// "no file").
    public static func readIfPresent(_ path: String) throws(SystemError) -> [UInt8]? {
        do {
            return try read(path)
        } catch where error.operation == "open" && error.errno == ENOENT {
            return nil
        }
    }

    /// Creates `path` as a directory with `mode` if it is missing, and sets `mode` if it exists.
    public static func makeDirectory(_ path: String, mode: mode_t = 0o700) throws(SystemError) {
        if mkdir(path, mode) != 0, errno != EEXIST { throw SystemError("mkdir", path: path) }
        guard chmod(path, mode) == 0 else { throw SystemError("chmod", path: path) }
    }

    /// `fsync`s the file at `path`, then the directory that holds it: a file written by
    /// someone else (SQLite) made durable with its name.
    public static func sync(_ path: String) throws(SystemError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open", path: path) }
        let synced = fsync(fd) == 0
        let failure = synced ? nil : SystemError("fsync", path: path)
        close(fd)
        if let failure { throw failure }
        try syncDirectory(of: path)
    }

    private static func syncDirectory(of path: String) throws(SystemError) {
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open", path: directory) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw SystemError("fsync", path: directory) }
    }
}
