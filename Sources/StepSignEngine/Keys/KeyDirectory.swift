#if canImport(Glibc)
import StepSignSystem
import Glibc
#endif
import Logging
import StepSignCrypto
import StepSignProtocol
import struct Foundation.Date

/// The daemon's `keys/` directory: what makes a key this daemon's own, and what no database
/// writer can change (SPEC §5.4).
///
/// - `<kid>.pem`: a private key (PKCS#8 PEM, 0600, encrypted when a passphrase is given).
///   Every such file is an own key, trusted and published, whatever the store lists.
/// - `<kid>.revoked`: the record that the key was revoked, written before the revocation is
///   acknowledged. It is never removed, so a revocation cannot be undone by clearing a
///   database column.
struct KeyDirectory {
    let path: String
    let passphrase: [UInt8]?

    /// One private key file.
    struct OwnKey {
        var key: P256PrivateKey
        /// The file's modification time: the key's creation time when the store has no record.
        var modified: Date
    }

    func file(for kid: String) -> String { "\(path)/\(kid).pem" }
    private func revocationFile(for kid: String) -> String { "\(path)/\(kid).revoked" }

    /// Every key file, by kid, each checked against the kid its name gives. Keys in `known`
    /// (loaded before) are taken from there, not read and decrypted again: a refresh costs a
    /// directory listing, whoever asks for it how often.
    func loadKeys(known: [String: OwnKey] = [:], logger: Logger) throws -> [String: OwnKey] {
        var keys: [String: OwnKey] = [:]
        for name in try names() where name.hasSuffix(".pem") {
            let kid = String(name.dropLast(4))
            if let loaded = known[kid] {
                keys[kid] = loaded
                continue
            }
            let path = file(for: kid)
            let bytes: [UInt8]
            var info = stat()
            do {
                bytes = try SecureFile.read(path)
                guard stat(path, &info) == 0 else { throw SystemError("stat", path: path) }
            } catch {
                throw KeyringError.missingKeyFile(path: path, instance: "", reason: "\(error)")
            }
            let pem = String(decoding: bytes, as: UTF8.self)
            let privateKey: P256PrivateKey
            do {
                privateKey = try P256PrivateKey(pkcs8PEM: pem, passphrase: passphrase)
            } catch {
                throw KeyringError.unreadableKey(path: path, reason: error)
            }
            if passphrase != nil, !pem.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
                logger.warning("key file is not encrypted although a key passphrase is set; rotate the key to retire it",
                               metadata: ["path": "\(path)"])
            }
            guard privateKey.publicKey.thumbprint == kid else {
                throw KeyringError.kidMismatch(path: path, expected: kid, found: privateKey.publicKey.thumbprint)
            }
            keys[kid] = OwnKey(key: privateKey, modified: Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec)))
        }
        return keys
    }

    /// Writes a new key file (two `fsync`s; blocking).
    func write(_ key: P256PrivateKey) throws {
        let pem = try key.pkcs8PEM(passphrase: passphrase)
        try SecureFile.writeAtomically(Array(pem.utf8), to: file(for: key.publicKey.thumbprint), mode: 0o600)
    }

    /// A revocation recorded here.
    struct Revocation: Equatable {
        var at: Date
        /// The log index of its event; nil while the event is being appended (or if that
        /// failed): the key is revoked all the same.
        var logIndex: Int64?
    }

    /// The revocations recorded here, by kid.
    func revocations() throws -> [String: Revocation] {
        var revoked: [String: Revocation] = [:]
        for name in try names() where name.hasSuffix(".revoked") {
            let kid = String(name.dropLast(8))
            let record = try? JSONParser.parse(try SecureFile.read(revocationFile(for: kid)))
            revoked[kid] = Revocation(at: Date(timeIntervalSince1970: Double(record?["revokedAt"]?.int ?? 0)),
                                      logIndex: record?["logIndex"]?.intValue)
        }
        return revoked
    }

    /// Records, durably, that `kid` was revoked at `at` by the event at `logIndex` (nil: not
    /// known yet). An existing record is kept, only gaining a log index it lacked.
    func recordRevocation(of kid: String, at: Date, logIndex: Int64?) throws {
        if let existing = try revocations()[kid], existing.logIndex != nil || logIndex == nil { return }
        var writer = JSONWriter(capacity: 128)
        writer.beginObject()
        writer.member("kid", kid)
        writer.member("revokedAt", Int64(at.timeIntervalSince1970))
        if let logIndex { writer.member("logIndex", logIndex) }
        writer.endObject()
        try SecureFile.writeAtomically(writer.bytes + [0x0A], to: revocationFile(for: kid), mode: 0o600)
    }

    /// The names in the directory, without `.` and `..`.
    private func names() throws -> [String] {
        guard let names = DirectoryListing.names(in: path) else { throw SystemError("opendir", path: path) }
        return names
    }
}
