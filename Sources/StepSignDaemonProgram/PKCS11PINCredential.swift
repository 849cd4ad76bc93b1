#if canImport(Glibc)
import Glibc
import StepSignSystem
#endif
import StepSignConfig

/// The user PIN of the PKCS#11 token (SPEC §5.7): `[signing.pkcs11] pin_file`, else the systemd
/// credential `stepsign-pkcs11-pin` in `$CREDENTIALS_DIRECTORY`.
///
/// Never in argv, the environment or a log line; errors name the file, never its content. The
/// file's modes are checked by strict modes (``StrictModes``) before it is read.
enum PKCS11PINCredential {
    /// The PIN without one trailing newline. Throws when neither source holds one.
    static func load(_ settings: StepSignConfiguration.Signing.PKCS11) throws(PINError) -> [UInt8] {
        let path: String
        if !settings.pinFile.isEmpty {
            path = settings.pinFile
        } else if let directory = getenv("CREDENTIALS_DIRECTORY").map({ String(cString: $0) }), !directory.isEmpty {
            path = directory + "/" + StepSignConfiguration.Signing.PKCS11.pinCredentialName
        } else {
            throw .missing
        }
        do {
            return try SecretFileReader.read(path, limit: 1024)
        } catch {
            switch error {
            case .absent: if settings.pinFile.isEmpty { throw .missing } else { throw .unreadable(path: path, ENOENT) }
            case let .unreadable(code): throw .unreadable(path: path, code)
            case .empty: throw .empty(path: path)
            case .tooLong: throw .tooLong(path: path)
            }
        }
    }
}

/// Why the token's PIN could not be read. Names the file, never its content.
enum PINError: Error, CustomStringConvertible {
    case missing
    case unreadable(path: String, Int32)
    case empty(path: String)
    case tooLong(path: String)

    var description: String {
        switch self {
        case .missing:
            "[signing] key_store = \"pkcs11\" needs the token's PIN: [signing.pkcs11] pin_file, or the systemd credential "
                + StepSignConfiguration.Signing.PKCS11.pinCredentialName
        case let .unreadable(path, code): "cannot read the PKCS#11 PIN file \(path): \(String(cString: strerror(code)))"
        case let .empty(path): "the PKCS#11 PIN file \(path) is empty"
        case let .tooLong(path): "the PKCS#11 PIN file \(path) is longer than 1024 bytes"
        }
    }
}
