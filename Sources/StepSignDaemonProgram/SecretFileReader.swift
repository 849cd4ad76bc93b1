#if canImport(Glibc)
import Glibc
import StepSignSystem
#endif

/// Reads a small secret file: a systemd credential or a PIN file (SPEC §2, §5.7). One reader
/// for every such secret, so that each is opened the same way (no symlink followed, not
/// inherited by children), read with a bound, and wiped from the read buffers; callers turn a
/// ``Failure`` into their own error, which names the file, never its content.
enum SecretFileReader {
    enum Failure: Error {
        /// The file does not exist.
        case absent
        case unreadable(Int32)
        case empty
        case tooLong
    }

    /// The bytes of `path` without one trailing newline; at most `limit` bytes.
    static func read(_ path: String, limit: Int) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            let code = errno
            throw code == ENOENT ? .absent : .unreadable(code)
        }
        defer { close(fd) }
        var secret: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        defer { wipe(&chunk) }
        while true {
            let count = retryingOnEINTR { chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
            if count < 0 {
                let code = errno
                wipe(&secret)
                throw .unreadable(code)
            }
            if count == 0 { break }
            guard secret.count + count <= limit else {
                wipe(&secret)
                throw .tooLong
            }
            secret.append(contentsOf: chunk[0..<count])
        }
        if secret.last == UInt8(ascii: "\n") {
            secret[secret.count - 1] = 0
            secret.removeLast()
        }
        guard !secret.isEmpty else { throw .empty }
        return secret
    }

    /// Overwrites `bytes` with zeros (best effort: copies Swift made earlier are not reached).
    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            _ = memset(base, 0, buffer.count)
        }
    }
}
