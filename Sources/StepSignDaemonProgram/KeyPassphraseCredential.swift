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
        do {
            return try SecretFileReader.read(path, limit: 4096)
        } catch {
            switch error {
            case .absent: return nil
            case let .unreadable(code): throw .unreadable(path: path, code)
            case .empty: throw .empty(path: path)
            case .tooLong: throw .tooLong(path: path)
            }
        }
    }

    /// Overwrites `bytes` with zeros (``SecretFileReader/wipe(_:)``).
    static func wipe(_ bytes: inout [UInt8]) {
        SecretFileReader.wipe(&bytes)
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

extension CredentialError: ErrnoCarrying {
    /// The failed read's errno: EIO on the credential at start is a fault that may pass.
    var carriedErrno: Int32? {
        if case let .unreadable(_, code) = self { code } else { nil }
    }

    var carriedPath: String? {
        switch self {
        case let .unreadable(path, _), let .empty(path), let .tooLong(path): path
        }
    }
}
