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
/// - `<kid>.pkcs11`: a private key in the PKCS#11 token (SPEC §5.7): its `CKA_ID` and public
///   half only (``TokenKeyRecord``). An own key like a `.pem`; it needs the token to sign.
/// - `<kid>.revoked`: the record that the key was revoked, written before the revocation is
///   acknowledged. It is never removed, so a revocation cannot be undone by clearing a
///   database column.
struct KeyDirectory {
    let path: String
    let passphrase: [UInt8]?
    /// The token new keys are made in (`[signing] key_store = "pkcs11"`), or nil: key files.
    var token: PKCS11Token? = nil

    /// One private key file.
    struct OwnKey {
        var key: P256PrivateKey
        /// The file's modification time: the key's creation time when the store has no record.
        var modified: Date
    }

    func file(for kid: String) -> String { "\(path)/\(kid).pem" }
    func tokenFile(for kid: String) -> String { "\(path)/\(kid)\(TokenKeyRecord.suffix)" }
    func tokenKeyFileExists(_ kid: String) -> Bool { access(tokenFile(for: kid), F_OK) == 0 }
    private func revocationFile(for kid: String) -> String { "\(path)/\(kid).revoked" }

    /// Every key file, by kid, each checked against the kid its name gives. Keys in `known`
    /// (loaded before) are taken from there, not read and decrypted again: a refresh costs a
    /// directory listing, whoever asks for it how often.
    func loadKeys(known: [String: OwnKey] = [:], logger: Logger) throws -> [String: OwnKey] {
        var keys: [String: OwnKey] = [:]
        let names = try names()
        for name in names where name.hasSuffix(TokenKeyRecord.suffix) {
            let kid = String(name.dropLast(TokenKeyRecord.suffix.count))
            if let loaded = known[kid] {
                keys[kid] = loaded
                continue
            }
            keys[kid] = try loadTokenKey(kid: kid)
        }
        for name in names where name.hasSuffix(".pem") {
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
                throw KeyringError.unreadableFile(path: path, error)
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

    /// The key a `<kid>.pkcs11` record names, from the token, checked against its kid.
    private func loadTokenKey(kid: String) throws -> OwnKey {
        let path = tokenFile(for: kid)
        let record: TokenKeyRecord
        var info = stat()
        do {
            record = try TokenKeyRecord(bytes: try SecureFile.read(path))
            guard stat(path, &info) == 0 else { throw SystemError("stat", path: path) }
        } catch {
            throw KeyringError.unreadableFile(path: path, error)
        }
        guard let token else {
            throw KeyringError.missingKeyFile(path: path, instance: "",
                                              reason: "the key is in a PKCS#11 token, but [signing] key_store is not \"pkcs11\"")
        }
        let key: P256PrivateKey
        do {
            key = try token.p256Key(id: record.id)
        } catch {
            throw KeyringError.token(path: path, error)
        }
        guard key.publicKey.thumbprint == kid else {
            throw KeyringError.kidMismatch(path: path, expected: kid, found: key.publicKey.thumbprint)
        }
        return OwnKey(key: key, modified: Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec)))
    }

    /// Makes a new key where keys are kept: in the token (a random 16-byte `CKA_ID`) or in
    /// memory, to be written by ``write(_:)``. Blocking.
    func generate() throws -> P256PrivateKey {
        guard let token else { return try P256PrivateKey.generate() }
        let id = try SecureRandom.bytes(count: 16)
        do {
            return try token.generateP256Key(id: id, label: "stepsign signing key")
        } catch {
            throw KeyringError.token(path: path, error)
        }
    }

    /// Writes a new key file (two `fsync`s; blocking): a key in a token as its `<kid>.pkcs11`
    /// record (its `CKA_ID` and public half), any other as PEM.
    func write(_ key: P256PrivateKey) throws {
        if let id = key.tokenID {
            let record = TokenKeyRecord(id: id, publicKeyPEM: key.publicKey.spkiPEM)
            try SecureFile.writeAtomically(record.bytes, to: tokenFile(for: key.publicKey.thumbprint), mode: 0o600)
            return
        }
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
