#if canImport(Glibc)
import Glibc
#endif
import StepSignCrypto

/// The daemon's Ed25519 log key (SPEC §5.5): it signs the transparency log's checkpoints as
/// C2SP signed notes (type 0x01), which witnesses accept. Kept like the signing keys: in
/// `keys/log-ed25519.key` (PKCS#8 PEM, 0600, encrypted with the key passphrase when one is
/// set), made at the first start. Not `.pem`, so that the signing keys' directory listing
/// never takes it for a P-256 key.
enum LogKey {
    static let fileName = "log-ed25519.key"

    /// The key in `directory`, made and written (two `fsync`s) if there is none yet.
    static func loadOrCreate(directory: String, passphrase: [UInt8]?) throws -> Ed25519PrivateKey {
        let path = directory + "/" + fileName
        if access(path, F_OK) == 0 {
            let bytes: [UInt8]
            do {
                bytes = try SecureFile.read(path)
            } catch {
                throw KeyringError.missingKeyFile(path: path, instance: "", reason: "\(error)")
            }
            do {
                return try Ed25519PrivateKey(pkcs8PEM: String(decoding: bytes, as: UTF8.self), passphrase: passphrase)
            } catch {
                throw KeyringError.unreadableKey(path: path, reason: error)
            }
        }
        let key = try Ed25519PrivateKey.generate()
        try SecureFile.writeAtomically(Array(try key.pkcs8PEM(passphrase: passphrase).utf8), to: path, mode: 0o600)
        return key
    }
}
