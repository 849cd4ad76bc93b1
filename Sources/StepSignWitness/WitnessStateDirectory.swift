#if canImport(Glibc)
import Glibc
#endif
import StepSignCrypto
import StepSignFormat
import StepSignSystem

/// A witness's state directory (mode 0700), held under an exclusive lock so that two witness
/// processes never answer from two copies of one state:
///
///     DIR/lock                    flock'ed while the witness runs
///     DIR/witness.name            its name (the key name of its cosignatures)
///     DIR/witness-ed25519.key     its Ed25519 key (PKCS #8 PEM, 0600), made on first start
///     DIR/logs/<sha256(origin)>   per log, the latest checkpoint it cosigned, as submitted
///
/// Each log's file is replaced atomically and made durable (fsync of the file and the
/// directory) before the cosignature of its checkpoint leaves (C2SP tlog-witness).
public final class WitnessStateDirectory: Sendable {
    /// The directory.
    public let path: String
    /// The witness's name.
    public let name: String
    /// The witness's signing key.
    public let signingKey: Ed25519PrivateKey
    /// The descriptor holding the lock; closed (and the lock released) in `deinit`.
    private let lockDescriptor: Int32

    /// Opens (creating it if missing) the state directory at `path`. The first start needs
    /// `name`; later starts read it, and a different `name` is refused (it would change the
    /// witness's verifier key under those who trust it).
    public init(path: String, name: String?) throws(WitnessSetupError) {
        do {
            try SecureFile.makeDirectory(path)
            try SecureFile.makeDirectory(path + "/logs")
        } catch { throw WitnessSetupError("the state directory: \(error)") }
        let lockPath = path + "/lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw WitnessSetupError("the state directory: \(SystemError("open", path: lockPath))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw WitnessSetupError("another witness holds \(path) (its lock is taken)")
        }
        do {
            self.name = try Self.name(in: path, given: name)
            self.signingKey = try Self.key(in: path)
        } catch {
            close(fd)
            throw error
        }
        self.path = path
        self.lockDescriptor = fd
    }

    deinit { close(lockDescriptor) }

    /// The verifier key of the witness whose state directory is `path`, for `stepsign-witness
    /// key`. Once the directory has its name and key, they are only read, without the lock, so
    /// this works while a server holds the directory (issue 39); a `name` other than the stored
    /// one is refused as by ``init(path:name:)``. The first use makes them, under the lock.
    public static func verifierKey(path: String, name: String?) throws(WitnessSetupError) -> NoteVerifierKey {
        guard try exists(path + "/witness.name"), try exists(path + "/witness-ed25519.key") else {
            return try WitnessStateDirectory(path: path, name: name).verifierKey
        }
        let stored = try Self.name(in: path, given: name)
        let key = try Self.key(in: path)
        // The name was checked when it was stored, so this cannot fail.
        return try! NoteVerifierKey(name: stored, ed25519: key.publicKey, type: .cosignatureV1)
    }

    /// The witness's verifier key (type 0x04), which logs and verifiers configure.
    public var verifierKey: NoteVerifierKey {
        // The name was checked when it was stored, so this cannot fail.
        try! NoteVerifierKey(name: name, ed25519: signingKey.publicKey, type: .cosignatureV1)
    }

    /// The latest checkpoint cosigned for `origin`, or nil if none was.
    func latest(origin: String) throws(WitnessSetupError) -> SignedNote? {
        let file = logPath(origin)
        do {
            // Only a file that is not there is "never cosigned": a witness that took a failed
            // read for that would cosign a checkpoint that does not extend its last one.
            guard let bytes = try SecureFile.readIfPresent(file) else { return nil }
            let note = try SignedNote(parsing: String(decoding: bytes, as: UTF8.self))
            guard try LogCheckpoint(text: note.text).origin == origin else {
                throw WitnessSetupError("\(file) holds a checkpoint of another origin")
            }
            return note
        } catch let error as WitnessSetupError {
            throw error
        } catch {
            throw WitnessSetupError("\(file): \(error)")
        }
    }

    /// Stores `checkpoint` as the latest cosigned for `origin`, durably.
    func store(_ checkpoint: SignedNote, origin: String) throws(SystemError) {
        try SecureFile.writeAtomically(Array(checkpoint.serialized.utf8), to: logPath(origin))
    }

    /// Whether `file` exists (false only for ENOENT), as a setup error otherwise.
    private static func exists(_ file: String) throws(WitnessSetupError) -> Bool {
        do { return try SecureFile.exists(file) } catch { throw WitnessSetupError("\(file): \(error)") }
    }

    private func logPath(_ origin: String) -> String {
        path + "/logs/" + Hex.encode(SHA256.hash(Array(origin.utf8)))
    }

    private static func name(in path: String, given: String?) throws(WitnessSetupError) -> String {
        let file = path + "/witness.name"
        if try exists(file) {
            let stored: String
            do { stored = String(decoding: try SecureFile.read(file), as: UTF8.self) } catch {
                throw WitnessSetupError("\(file): \(error)")
            }
            let name = stored.hasSuffix("\n") ? String(stored.dropLast()) : stored
            if let given, given != name {
                throw WitnessSetupError("the witness in \(path) is named \(name), not \(given) (its name is part of its key)")
            }
            return name
        }
        guard let given else { throw WitnessSetupError("the first start in \(path) needs the witness's name (--name)") }
        // The name is a note key name: checked by making a key of it.
        do { _ = try NoteVerifierKey(name: given, ed25519: try Ed25519PrivateKey.generate().publicKey) } catch {
            throw WitnessSetupError("the name \"\(given)\" is not a key name: \(error)")
        }
        do { try SecureFile.writeAtomically(Array((given + "\n").utf8), to: file, mode: 0o644) } catch {
            throw WitnessSetupError("\(file): \(error)")
        }
        return given
    }

    private static func key(in path: String) throws(WitnessSetupError) -> Ed25519PrivateKey {
        let file = path + "/witness-ed25519.key"
        do {
            // Made only when there is none: a check that failed is not "no key".
            if let pem = try SecureFile.readIfPresent(file) {
                return try Ed25519PrivateKey(pkcs8PEM: String(decoding: pem, as: UTF8.self))
            }
            let key = try Ed25519PrivateKey.generate()
            try SecureFile.writeAtomically(Array(try key.pkcs8PEM().utf8), to: file, mode: 0o600)
            return key
        } catch {
            throw WitnessSetupError("\(file): \(error)")
        }
    }
}
