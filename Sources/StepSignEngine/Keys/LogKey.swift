#if canImport(Glibc)
import StepSignSystem
import Glibc
#endif
import StepSignCrypto

/// The daemon's Ed25519 log keys (SPEC §5.5): the active one signs the transparency log's
/// checkpoints as C2SP signed notes (type 0x01), which witnesses accept. Kept like the signing
/// keys: in `keys/log-ed25519.key` (PKCS#8 PEM, 0600, encrypted with the key passphrase when one
/// is set), made at the first start, and rotated with the signing key: the one it replaces is
/// kept as `keys/log-ed25519-<hex>.retired`, whose public half stays published so that older
/// checkpoints (and the proof files that carry them) keep verifying. Not `.pem`, so that the
/// signing keys' directory listing never takes one for a P-256 key.
struct LogKey: Sendable {
    static let fileName = "log-ed25519.key"
    static let retiredPrefix = "log-ed25519-"
    static let retiredSuffix = ".retired"

    /// The key that signs new checkpoints.
    var active: Ed25519PrivateKey
    /// The keys it replaced, oldest first (public halves: they sign nothing more).
    var retired: [Ed25519PublicKey]

    /// The keys in `directory`, the active one made and written (two `fsync`s) if there is none yet.
    static func loadOrCreate(directory: String, passphrase: [UInt8]?) throws -> LogKey {
        let path = directory + "/" + fileName
        let active: Ed25519PrivateKey
        if access(path, F_OK) == 0 {
            active = try read(path, passphrase: passphrase)
        } else {
            active = try Ed25519PrivateKey.generate()
            try SecureFile.writeAtomically(Array(try active.pkcs8PEM(passphrase: passphrase).utf8), to: path, mode: 0o600)
        }
        let names = (DirectoryListing.names(in: directory) ?? [])
            .filter { $0.hasPrefix(retiredPrefix) && $0.hasSuffix(retiredSuffix) }.sorted()
        var retired: [Ed25519PublicKey] = []
        for name in names {
            let key = try read(directory + "/" + name, passphrase: passphrase).publicKey
            // A rotation cut short leaves the active key's retired copy: it is not retired.
            if key.raw != active.publicKey.raw, !retired.contains(where: { $0.raw == key.raw }) { retired.append(key) }
        }
        return LogKey(active: active, retired: retired)
    }

    /// Replaces the active key with a new one: the old one is first kept as a retired file
    /// (so a crash between the two writes loses no key), then the new one takes its place.
    static func rotate(_ current: LogKey, directory: String, passphrase: [UInt8]?) throws -> LogKey {
        let old = current.active
        let retiredPath = directory + "/" + retiredPrefix + Hex.encode(SHA256.hash(old.publicKey.raw).prefix(8)) + retiredSuffix
        try SecureFile.writeAtomically(Array(try old.pkcs8PEM(passphrase: passphrase).utf8), to: retiredPath, mode: 0o600)
        let new = try Ed25519PrivateKey.generate()
        try SecureFile.writeAtomically(Array(try new.pkcs8PEM(passphrase: passphrase).utf8), to: directory + "/" + fileName,
                                       mode: 0o600)
        return LogKey(active: new, retired: current.retired + [old.publicKey])
    }

    private static func read(_ path: String, passphrase: [UInt8]?) throws -> Ed25519PrivateKey {
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
}
