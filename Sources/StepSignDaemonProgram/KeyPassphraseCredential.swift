#if canImport(Glibc)
import Glibc
import StepSignSystem
#endif

/// The passphrase that encrypts the signing keys at rest: the systemd credential
/// `stepsign-key-passphrase` (`LoadCredential=` or `SetCredentialEncrypted=`), read from
/// `$CREDENTIALS_DIRECTORY` (SPEC §2).
///
/// The passphrase is never logged and never in argv. The daemon keeps it in memory for as long
/// as it runs, since a key rotation encrypts the new key with it; the process is non-dumpable.
enum KeyPassphraseCredential {
    /// The credential's name, as in `LoadCredential=stepsign-key-passphrase:…`.
    static let name = "stepsign-key-passphrase"

    /// The passphrase bytes without one trailing newline, or nil when `$CREDENTIALS_DIRECTORY`
    /// is unset or holds no such credential (the keys are then stored unencrypted).
    static func load() throws(CredentialError) -> [UInt8]? {
        let credentialsDirectory = getenv("CREDENTIALS_DIRECTORY").map { String(cString: $0) }
        guard let credentialsDirectory, !credentialsDirectory.isEmpty else { return nil }
        let path = credentialsDirectory + "/" + name
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw .unreadable(path: path, errno)
        }
        defer { close(fd) }
        var secret: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        defer { wipe(&chunk) }
        while true {
            let count = retryingOnEINTR { chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }
            if count < 0 {
                let code = errno
                wipe(&secret)
                throw .unreadable(path: path, code)
            }
            if count == 0 { break }
            guard secret.count + count <= 4096 else {
                wipe(&secret)
                throw .tooLong(path: path)
            }
            secret.append(contentsOf: chunk[0..<count])
        }
        if secret.last == UInt8(ascii: "\n") {
            secret[secret.count - 1] = 0
            secret.removeLast()
        }
        guard !secret.isEmpty else { throw .empty(path: path) }
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

/// Why the key passphrase credential could not be used. Names the file, never its content.
enum CredentialError: Error, CustomStringConvertible {
    case unreadable(path: String, Int32)
    case empty(path: String)
    case tooLong(path: String)

    var description: String {
        switch self {
        case let .unreadable(path, code): "cannot read the key passphrase credential \(path): \(String(cString: strerror(code)))"
        case let .empty(path): "the key passphrase credential \(path) is empty"
        case let .tooLong(path): "the key passphrase credential \(path) is longer than 4096 bytes"
        }
    }
}
