#if canImport(Glibc)
import Glibc
import StepSignSystem
#endif
import Logging
import StepSignCrypto

/// The key files of a state directory's `keys/` read as the daemon reads them at start, without
/// making, changing or locking anything (`stepsignd --check`): every signing key file opens
/// (with the passphrase credential when one is given) and holds the key its name gives, the
/// log key opens, and the seal key (SQLite) is one line of base64url of 32 bytes. A file the
/// daemon would make at its first start may be missing. With `token` (`key_store = "pkcs11"`),
/// each `<kid>.pkcs11` record and `log-ed25519.token` names a key the token holds (by
/// `CKA_ID`) whose public half is the recorded one; nothing is made in the token.
package enum KeyFilesCheck {
    /// What was found: the number of signing key files, and whether a log key exists yet.
    package struct Found: Sendable {
        package var signingKeys: Int
        package var logKey: Bool
    }

    /// Reads `<stateDirectory>/keys`; throws the first file that the daemon would refuse,
    /// naming it (``KeyringError``, ``SealKeyError``), never its contents.
    package static func check(stateDirectory: String, passphrase: [UInt8]?, sealKeyInStateDirectory: Bool,
                              token: PKCS11Token? = nil) throws -> Found {
        let base = stateDirectory.hasSuffix("/") ? String(stateDirectory.dropLast()) : stateDirectory
        let path = base + "/keys"
        // Only a missing file may be one the first start makes: a check that failed is thrown.
        guard try SecureFile.exists(path) else { return Found(signingKeys: 0, logKey: false) }
        let quiet = Logger(label: "stepsign.check", factory: { _ in SwiftLogNoOpLogHandler() })
        let keys = try KeyDirectory(path: path, passphrase: passphrase, token: token).loadKeys(logger: quiet)
        let logKeyPath = path + "/" + LogKey.fileName
        let tokenLogKeyPath = path + "/" + LogKey.tokenFileName
        let hasTokenLogKey = try SecureFile.exists(tokenLogKeyPath)
        let hasLogKey = try hasTokenLogKey || SecureFile.exists(logKeyPath)
        if hasTokenLogKey {
            _ = try LogKey.read(tokenLogKeyPath, passphrase: passphrase, token: token)
        } else if hasLogKey {
            let bytes: [UInt8]
            do {
                bytes = try SecureFile.read(logKeyPath)
            } catch {
                throw KeyringError.unreadableFile(path: logKeyPath, error)
            }
            do {
                _ = try Ed25519PrivateKey(pkcs8PEM: String(decoding: bytes, as: UTF8.self), passphrase: passphrase)
            } catch {
                throw KeyringError.unreadableKey(path: logKeyPath, reason: error)
            }
        }
        let sealPath = path + "/" + SealKey.fileName
        if sealKeyInStateDirectory, try SecureFile.exists(sealPath) {
            _ = try SealKey.parse(try SecureFile.read(sealPath), path: sealPath)
        }
        return Found(signingKeys: keys.count, logKey: hasLogKey)
    }
}
