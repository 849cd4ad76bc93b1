#if canImport(Glibc)
import StepSignSystem
import Glibc
#endif
import StepSignCrypto
import StepSignStorage

/// Where the seal key of the credential records (SPEC §5.4) comes from. Never the database:
/// whoever can write the database must not be able to seal a record.
///
/// - SQLite: `keys/seal.key` in the state directory, made (0600) the first time; keep it in
///   the backups with the database, or every record fails its check on a restore.
/// - PostgreSQL: one key for the cluster, the same on every host: `storage.seal_key_file`,
///   else the systemd credential `stepsign-seal-key`.
///
/// A key file holds the 32 bytes as one line of base64url (`stepsign admin cluster seal-key new`
/// writes one).
public enum SealKey {
    /// The name of the systemd credential that holds the cluster's seal key.
    public static let credentialName = "stepsign-seal-key"

    /// The name of the SQLite daemon's key file in `keys/`.
    public static let fileName = "seal.key"

    /// The SQLite daemon's key, from `<stateDirectory>/keys/seal.key`, made now if there is
    /// none: `created` tells the store it may seal the records an older version left unsealed.
    public static func stateKey(stateDirectory: String) throws -> (seal: CredentialSeal, created: Bool) {
        let base = stateDirectory.hasSuffix("/") ? String(stateDirectory.dropLast()) : stateDirectory
        let directory = base + "/keys"
        let path = directory + "/" + fileName
        do {
            return (try CredentialSeal(key: try parse(try SecureFile.read(path), path: path)), false)
        } catch let error as SystemError where error.errno == ENOENT {
            // The state directory as the store makes it (0700) if it is not there yet.
            if mkdir(base, 0o700) != 0, errno != EEXIST { throw SystemError("mkdir", path: base) }
            try SecureFile.makeDirectory(directory)
            let key = try CredentialSeal.newKey()
            try SecureFile.writeAtomically(Array((Base64URL.encode(key) + "\n").utf8), to: path)
            return (try CredentialSeal(key: key), true)
        }
    }

    /// The cluster's key: `file` (`storage.seal_key_file`) when set, else the credential
    /// `stepsign-seal-key` in `$CREDENTIALS_DIRECTORY`.
    public static func clusterKey(file: String, environment: [String: String]) throws -> CredentialSeal {
        let path: String
        if !file.isEmpty {
            path = file
        } else if let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty {
            path = directory + "/" + credentialName
            if access(path, F_OK) != 0 { throw SealKeyError.missing }
        } else {
            throw SealKeyError.missing
        }
        return try CredentialSeal(key: try parse(try SecureFile.read(path), path: path))
    }

    /// The key in a key file's contents: one line of base64url (or base64) of 32 bytes.
    static func parse(_ contents: [UInt8], path: String) throws -> [UInt8] {
        var text = String(decoding: contents, as: UTF8.self)
        while let last = text.last, last == "\n" || last == "\r" || last == " " { text.removeLast() }
        text = String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 }.filter { $0 != "=" })
        guard let key = Base64URL.decode(text), key.count == CredentialSeal.keyLength else {
            throw SealKeyError.malformed(path: path)
        }
        return key
    }
}

/// Why the seal key cannot be had.
public enum SealKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// PostgreSQL without `storage.seal_key_file` and without the credential.
    case missing
    /// The file does not hold one line of base64url of 32 bytes.
    case malformed(path: String)

    public var description: String {
        switch self {
        case .missing:
            "the PostgreSQL backend needs the cluster's seal key (SPEC 5.4): set storage.seal_key_file, or pass the "
                + "systemd credential \(SealKey.credentialName) (make one with stepsign admin cluster seal-key new --out FILE, "
                + "the same on every host)"
        case let .malformed(path):
            "the seal key file \(path) must hold one line of base64url of \(CredentialSeal.keyLength) bytes"
        }
    }
}
