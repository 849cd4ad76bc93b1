#if canImport(Glibc)
import StepSignSystem
import Glibc
#endif
import StepSignCrypto

/// The daemon's Ed25519 log keys (SPEC §2, §5.5): the active one signs the transparency log's
/// checkpoints as C2SP signed notes (type 0x01), which witnesses accept. It is the log's
/// identity towards witnesses and verifiers, so it is long-lived: a signing key's rotation or
/// revocation leaves it alone. It changes only with `admin.rotateLogKey`, and then, until the
/// log reaches ``Overlap/untilSize``, every note carries the old key's signature beside the
/// new one's, so that a witness or verifier that was given the new key before the overlap
/// ends never loses the log.
///
/// Kept like the signing keys: in `keys/log-ed25519.key` (PKCS#8 PEM, 0600, encrypted with the
/// key passphrase when one is set), made at the first start. A key a rotation replaced is kept
/// as `keys/log-ed25519-<hex>.retired`, whose public half stays published so that older
/// checkpoints (and the proof files that carry them) keep verifying; the overlap is
/// `keys/log-key-overlap` (`<retired file name> <size>`). Not `.pem`, so that the signing keys'
/// directory listing never takes one for a P-256 key.
///
/// With a PKCS#11 token that makes Ed25519 keys (`CKM_EC_EDWARDS_KEY_PAIR_GEN`, SPEC §5.7), a
/// new log key is made in the token instead, and `keys/log-ed25519.token` (not `.pkcs11`, the
/// suffix of a signing key's record) holds its `CKA_ID`
/// and public half (a ``TokenKeyRecord``); a retired token key's `.retired` file holds the same
/// record. A log key made as a file stays one until `admin.rotateLogKey` makes the next in
/// the token. A token without Ed25519 keeps the log key in a file.
struct LogKey: Sendable {
    static let fileName = "log-ed25519.key"
    static let tokenFileName = "log-ed25519.token"
    static let retiredPrefix = "log-ed25519-"
    static let retiredSuffix = ".retired"
    static let overlapFileName = "log-key-overlap"

    /// The key a rotation replaced, which signs notes beside the new one until the log has
    /// `untilSize` entries.
    struct Overlap: Sendable {
        var key: Ed25519PrivateKey
        var untilSize: Int64
    }

    /// The key that signs new checkpoints.
    var active: Ed25519PrivateKey
    /// The keys it replaced, oldest first (public halves: published; they sign nothing more,
    /// but the one in ``overlap``).
    var retired: [Ed25519PublicKey]
    /// The replaced key that still signs, while the log is below its size.
    var overlap: Overlap?

    /// The keys that sign a note of `size` entries: the active one, and the overlapping one
    /// while `size` is below its end.
    func signers(forSize size: Int64) -> [Ed25519PrivateKey] {
        guard let overlap, size < overlap.untilSize else { return [active] }
        return [overlap.key, active]
    }

    /// The keys in `directory`, the active one made and written (two `fsync`s) if there is none yet.
    static func loadOrCreate(directory: String, passphrase: [UInt8]?, token: PKCS11Token? = nil) throws -> LogKey {
        let path = directory + "/" + fileName
        let tokenPath = directory + "/" + tokenFileName
        let active: Ed25519PrivateKey
        // A key is made only when there is none: a check that failed (EIO) is thrown, not taken
        // for "no key", which would replace the log's long-lived key.
        if try SecureFile.exists(tokenPath) {
            active = try read(tokenPath, passphrase: passphrase, token: token)
        } else if try SecureFile.exists(path) {
            active = try read(path, passphrase: passphrase, token: token)
        } else {
            active = try write(makeKey(token: token), directory: directory, passphrase: passphrase)
        }
        // The retired keys too: a listing that failed would drop them for this run.
        guard let listed = DirectoryListing.names(in: directory) else { throw SystemError("opendir", path: directory) }
        let names = listed.filter { $0.hasPrefix(retiredPrefix) && $0.hasSuffix(retiredSuffix) }.sorted()
        var retired: [Ed25519PublicKey] = []
        for name in names {
            let key = try read(directory + "/" + name, passphrase: passphrase, token: token).publicKey
            // A rotation cut short leaves the active key's retired copy: it is not retired.
            if key.raw != active.publicKey.raw, !retired.contains(where: { $0.raw == key.raw }) { retired.append(key) }
        }
        return LogKey(active: active, retired: retired,
                      overlap: try readOverlap(directory: directory, active: active, passphrase: passphrase, token: token))
    }

    /// A new log key: in `token` when it makes Ed25519 keys, else in memory (for a file).
    private static func makeKey(token: PKCS11Token?) throws -> Ed25519PrivateKey {
        guard let token, token.supportsEd25519 else { return try Ed25519PrivateKey.generate() }
        let id = try SecureRandom.bytes(count: 16)
        do {
            return try token.generateEd25519Key(id: id, label: "stepsign log key")
        } catch {
            throw KeyringError.token(path: tokenFileName, error)
        }
    }

    /// What `keys/` keeps of `key`: its token record, or its (encrypted) PKCS#8 PEM.
    private static func contents(of key: Ed25519PrivateKey, passphrase: [UInt8]?) throws -> [UInt8] {
        if let id = key.tokenID { return TokenKeyRecord(id: id, publicKeyPEM: Hex.encode(key.publicKey.raw)).bytes }
        return Array(try key.pkcs8PEM(passphrase: passphrase).utf8)
    }

    /// Writes `key` as the active log key: `log-ed25519.token` for a token key (then removes a
    /// file key it replaces), `log-ed25519.key` for a file key.
    @discardableResult
    private static func write(_ key: Ed25519PrivateKey, directory: String, passphrase: [UInt8]?) throws -> Ed25519PrivateKey {
        if key.tokenID != nil {
            try SecureFile.writeAtomically(try contents(of: key, passphrase: passphrase), to: directory + "/" + tokenFileName,
                                           mode: 0o600)
            _ = unlink(directory + "/" + fileName)
        } else {
            try SecureFile.writeAtomically(try contents(of: key, passphrase: passphrase), to: directory + "/" + fileName,
                                           mode: 0o600)
        }
        return key
    }

    /// Where the active log key lives: "pkcs11" or "file".
    var location: String { active.tokenID == nil ? "file" : "pkcs11" }

    /// The overlap `keys/log-key-overlap` names, or nil: none, or one a rotation cut short left
    /// naming the active key itself.
    private static func readOverlap(directory: String, active: Ed25519PrivateKey, passphrase: [UInt8]?,
                                    token: PKCS11Token?) throws -> Overlap? {
        let path = directory + "/" + overlapFileName
        guard let bytes = try SecureFile.readIfPresent(path) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 2, let size = Int64(fields[1]), size >= 0,
              fields[0].hasPrefix(retiredPrefix), fields[0].hasSuffix(retiredSuffix), !fields[0].contains("/") else {
            throw KeyringError.missingKeyFile(path: path, instance: "", reason: "expected \"\(retiredPrefix)….retired SIZE\"")
        }
        let key = try read(directory + "/" + fields[0], passphrase: passphrase, token: token)
        guard key.publicKey.raw != active.publicKey.raw else { return nil }
        return Overlap(key: key, untilSize: size)
    }

    /// Replaces the active key with a new one, the old one signing beside it until the log has
    /// `overlapUntil` entries. The old one is first kept as a retired file and named as the
    /// overlap, then the new one takes its place: a crash between the writes loses no key and
    /// leaves the old one active (an overlap naming the active key is ignored).
    /// With a token that makes Ed25519 keys, the new key is made in it.
    static func rotate(_ current: LogKey, directory: String, passphrase: [UInt8]?, overlapUntil: Int64,
                       token: PKCS11Token? = nil) throws -> LogKey {
        let old = current.active
        let retiredName = retiredPrefix + Hex.encode(SHA256.hash(old.publicKey.raw).prefix(8)) + retiredSuffix
        try SecureFile.writeAtomically(try contents(of: old, passphrase: passphrase), to: directory + "/" + retiredName,
                                       mode: 0o600)
        try SecureFile.writeAtomically(Array("\(retiredName) \(overlapUntil)\n".utf8), to: directory + "/" + overlapFileName,
                                       mode: 0o600)
        let new = try write(makeKey(token: token), directory: directory, passphrase: passphrase)
        return LogKey(active: new, retired: current.retired + [old.publicKey], overlap: Overlap(key: old, untilSize: overlapUntil))
    }

    /// The log key in `path`: a token key's record (found in `token`), or a PKCS#8 PEM.
    static func read(_ path: String, passphrase: [UInt8]?, token: PKCS11Token?) throws -> Ed25519PrivateKey {
        let bytes: [UInt8]
        do {
            bytes = try SecureFile.read(path)
        } catch {
            throw KeyringError.unreadableFile(path: path, error)
        }
        if bytes.first == UInt8(ascii: "{") {
            // A token key's record (SPEC §5.7).
            guard let token else {
                throw KeyringError.missingKeyFile(path: path, instance: "",
                                                  reason: "the log key is in a PKCS#11 token, but [signing] key_store is not \"pkcs11\"")
            }
            let record: TokenKeyRecord
            do { record = try TokenKeyRecord(bytes: bytes) } catch {
                throw KeyringError.unreadableFile(path: path, error)
            }
            let key: Ed25519PrivateKey
            do { key = try token.ed25519Key(id: record.id) } catch { throw KeyringError.token(path: path, error) }
            guard Hex.encode(key.publicKey.raw) == record.publicKeyPEM else {
                throw KeyringError.missingKeyFile(path: path, instance: "", reason: "the token's key is not the one recorded")
            }
            return key
        }
        do {
            return try Ed25519PrivateKey(pkcs8PEM: String(decoding: bytes, as: UTF8.self), passphrase: passphrase)
        } catch {
            throw KeyringError.unreadableKey(path: path, reason: error)
        }
    }
}
