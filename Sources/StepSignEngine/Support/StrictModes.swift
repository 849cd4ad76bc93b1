#if canImport(Glibc)
import Glibc
#endif
import StepSignConfig
import StepSignStorage

/// The file ownership and mode checks of SPEC §7, as sshd's `StrictModes`.
///
/// Three kinds of path:
///
/// - **State** (the state directory, `stepsign.sqlite` and its `-wal`/`-shm`, `keys/`, the
///   key files): owned by the daemon's effective uid, not writable by group or others. Key
///   files may not be readable by group or others either (they must be 0600 or stricter, as
///   the daemon writes them). What does not exist yet is skipped: the daemon creates it
///   private.
/// - **Trusted input** (the configuration file, `idv.trusted_keys`, the common-password file,
///   the notifier program): owned by root or the daemon's user, not writable by group or
///   others. Whoever can write one of these can approve signatures (IDV keys), weaken the
///   password policy, run code as the daemon (notifier) or change all of it (configuration).
/// - **The socket's directory** (`server.socket`, created by the daemon): the directory rule
///   below, for the socket's directory itself and those above it.
///
/// For every checked file, each directory on the way to it, up to `/`, must belong to root
/// or the daemon's user and must not be writable by group or others unless it has the sticky
/// bit (as `/tmp`): otherwise someone else could rename the file away and put their own in its
/// place. Symbolic links are followed; the directories both of the path as written and of the
/// file it resolves to are checked. Group write is refused even when the group is the
/// daemon's own: clients join that group (`systemd/sysusers.d`).
///
/// What this does not check: the interpreter of a notifier script and the files named in the
/// notifier's further arguments, and changes made after the check (the directory rule is
/// what keeps others from making them).
public struct StrictModes: Sendable {
    /// The daemon's effective uid: the owner its state must have.
    public var uid: UInt32

    /// Checks for a daemon running as `uid` (by default the effective uid).
    public init(uid: UInt32 = geteuid()) {
        self.uid = uid
    }

    /// The owners a trusted input and a directory on the way may have.
    private var rootOrDaemon: [UInt32] { uid == 0 ? [0] : [0, uid] }

    // MARK: - What the daemon checks

    /// The configuration file (at start and before a reload puts it in force).
    public func checkConfigurationFile(_ path: String) throws(StrictModesError) {
        try checkTrustedInput(path, role: "configuration file")
    }

    /// The files `configuration` names and will read or run (``referencedFiles(of:)``), each
    /// as a trusted input.
    public func checkReferencedFiles(of configuration: StepSignConfiguration) throws(StrictModesError) {
        for file in Self.referencedFiles(of: configuration) {
            try checkReferencedFile(file)
        }
    }

    /// One file the configuration names, with the dotted key that names it.
    package struct ReferencedFile: Sendable, Equatable {
        /// The key, e.g. `idv.trusted_keys`.
        package var key: String
        /// The role in messages: the key, or what of it is a file (`forgot_password.notifier program`).
        package var role: String
        package var path: String
        /// Whether it holds a secret: then not even readable by group or others.
        package var secret: Bool
    }

    /// The files `configuration` names and will read or run: `idv.trusted_keys` when IDV is
    /// configured, `password.common_passwords_file` when set, and the notifier program
    /// (`forgot_password.notifier[0]`) when forgot-password is enabled with a notifier, and on
    /// PostgreSQL `storage.postgresql.password_file`, `storage.seal_key_file` and (verify-full)
    /// `tls_ca_file` when set, and `cluster.root_key` when it names a file. One list, which
    /// the start, a reload and `stepsignd --check` all check.
    package static func referencedFiles(of configuration: StepSignConfiguration) -> [ReferencedFile] {
        var files: [ReferencedFile] = []
        func add(_ key: String, _ path: String, role: String? = nil, secret: Bool = false) {
            files.append(ReferencedFile(key: key, role: role ?? key, path: path, secret: secret))
        }
        if !configuration.idv.issuer.isEmpty {
            add("idv.trusted_keys", configuration.idv.trustedKeys)
        }
        if !configuration.password.commonPasswordsFile.isEmpty {
            add("password.common_passwords_file", configuration.password.commonPasswordsFile)
        }
        if configuration.forgotPassword.enabled, let program = configuration.forgotPassword.notifier.first {
            add("forgot_password.notifier", program, role: "forgot_password.notifier program")
        }
        if configuration.storage.backend == .postgresql, !configuration.storage.postgresql.passwordFile.isEmpty {
            add("storage.postgresql.password_file", configuration.storage.postgresql.passwordFile)
        }
        // Whoever may read the seal key may seal a record they wrote into the database (SPEC §5.4).
        if configuration.storage.backend == .postgresql, !configuration.storage.sealKeyFile.isEmpty {
            add("storage.seal_key_file", configuration.storage.sealKeyFile, secret: true)
        }
        // Whoever may read the PIN may sign with the token's keys; whoever may replace the
        // module runs code in the daemon (SPEC §5.7).
        if configuration.signing.keyStore == .pkcs11 {
            add("signing.pkcs11.module", configuration.signing.pkcs11.module)
            if !configuration.signing.pkcs11.pinFile.isEmpty {
                add("signing.pkcs11.pin_file", configuration.signing.pkcs11.pinFile, secret: true)
            }
        }
        // Whoever may replace the cluster root key may make any signing key trusted (SPEC §5.4).
        if configuration.cluster.rootKeyIsFile {
            add("cluster.root_key", configuration.cluster.rootKey)
        }
        // Not secret, but whoever may replace the CA file may impersonate the database server.
        if configuration.storage.backend == .postgresql, configuration.storage.postgresql.tls == .verifyFull,
           !configuration.storage.postgresql.tlsCAFile.isEmpty {
            add("storage.postgresql.tls_ca_file", configuration.storage.postgresql.tlsCAFile)
        }
        return files
    }

    /// One of ``referencedFiles(of:)``, as a trusted input.
    package func checkReferencedFile(_ file: ReferencedFile) throws(StrictModesError) {
        try checkTrustedInput(file.path, role: file.role, secret: file.secret)
    }

    /// The state directory, its database files, `keys/` and the key files in it, as far as
    /// they exist (a missing state directory only has its parent directories checked).
    public func checkStateDirectory(_ directory: String) throws(StrictModesError) {
        let stateRole = "state directory"
        guard let info = try status(directory, role: stateRole, file: directory) else {
            // The daemon will create it 0700; the directories it will live in must be safe.
            let parent = Self.parent(of: directory)
            if try status(parent, role: stateRole, file: directory) != nil {
                try checkDirectories(from: try resolve(parent, role: stateRole, file: directory),
                                     role: stateRole, file: directory, visited: [])
            }
            return
        }
        try checkState(directory, info: info, role: stateRole, directory: true)
        let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        for suffix in ["", "-wal", "-shm"] {
            let path = base + "/" + SQLiteStore.fileName + suffix
            if let info = try status(path, role: "database", file: path) {
                try checkState(path, info: info, role: "database", directory: false)
            }
        }
        let keys = base + "/keys"
        guard let keysInfo = try status(keys, role: "keys directory", file: keys) else { return }
        try checkState(keys, info: keysInfo, role: "keys directory", directory: true)
        for name in try entries(of: keys, role: "keys directory") where name.hasSuffix(".pem") || name == SealKey.fileName {
            let path = keys + "/" + name
            guard let info = try status(path, role: "key file", file: path) else { continue }
            try checkState(path, info: info, role: "key file", directory: false, privateToOwner: true)
        }
    }

    /// The directory the daemon creates its socket in (`server.socket`, when systemd does not
    /// pass one) and each directory above it: owned by root or the daemon's user, not writable
    /// by group or others unless sticky. Whoever may write that directory may swap the socket
    /// for their own and hear clients' passwords, or for a symbolic link while the daemon sets
    /// it up. The socket itself is not checked: the daemon replaces it, and sets its mode and
    /// group without following links (`SocketFileOwnership`).
    /// `role` names the socket's key in messages (`ssh_agent.socket` for the agent's).
    public func checkSocketDirectory(of socket: String, role: String = "server.socket") throws(StrictModesError) {
        let directory = try resolve(Self.parent(of: socket), role: role, file: socket)
        try checkDirectories(from: directory, role: role, file: socket, visited: [])
    }

    // MARK: - Rules

    /// A trusted input: an existing regular file of root or the daemon's user, not writable
    /// by group or others (`secret`: not readable by others either), in safe directories.
    private func checkTrustedInput(_ file: String, role: String, secret: Bool = false) throws(StrictModesError) {
        guard let info = try status(file, role: role, file: file) else {
            throw StrictModesError(role: role, file: file, path: file, problem: .cannotCheck(errno: ENOENT))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw StrictModesError(role: role, file: file, path: file, problem: .wrongType(expected: "a regular file"))
        }
        guard rootOrDaemon.contains(info.st_uid) else {
            throw StrictModesError(role: role, file: file, path: file, problem: .owner(uid: info.st_uid, allowed: rootOrDaemon))
        }
        guard info.st_mode & 0o022 == 0 else {
            throw StrictModesError(role: role, file: file, path: file, problem: .writableByGroupOrOthers(mode: info.st_mode))
        }
        if secret, info.st_mode & 0o007 != 0 {
            throw StrictModesError(role: role, file: file, path: file, problem: .accessibleByGroupOrOthers(mode: info.st_mode))
        }
        try checkDirectories(of: file, role: role)
    }

    /// A piece of state: the daemon's own, not writable by group or others (with
    /// `privateToOwner`, no access at all for them), in safe directories.
    private func checkState(_ file: String, info: stat, role: String, directory: Bool,
                            privateToOwner: Bool = false) throws(StrictModesError) {
        let type = directory ? S_IFDIR : S_IFREG
        guard info.st_mode & S_IFMT == type else {
            throw StrictModesError(role: role, file: file, path: file,
                                   problem: .wrongType(expected: directory ? "a directory" : "a regular file"))
        }
        guard info.st_uid == uid else {
            throw StrictModesError(role: role, file: file, path: file, problem: .owner(uid: info.st_uid, allowed: [uid]))
        }
        if privateToOwner {
            guard info.st_mode & 0o077 == 0 else {
                throw StrictModesError(role: role, file: file, path: file, problem: .accessibleByGroupOrOthers(mode: info.st_mode))
            }
        } else {
            guard info.st_mode & 0o022 == 0 else {
                throw StrictModesError(role: role, file: file, path: file, problem: .writableByGroupOrOthers(mode: info.st_mode))
            }
        }
        try checkDirectories(of: file, role: role)
    }

    /// Every directory above `file`: above the file it resolves to, and above the path as
    /// written (they differ when a symbolic link is on the way).
    private func checkDirectories(of file: String, role: String) throws(StrictModesError) {
        let resolved = try resolve(file, role: role, file: file)
        let visited = try checkDirectories(from: Self.parent(of: resolved), role: role, file: file, visited: [])
        let written = try resolve(Self.parent(of: file), role: role, file: file)
        try checkDirectories(from: written, role: role, file: file, visited: visited)
    }

    /// `start` and each directory above it up to `/`: owned by root or the daemon's user, not
    /// writable by group or others unless sticky. Returns `visited` with those it checked.
    @discardableResult
    private func checkDirectories(from start: String, role: String, file: String,
                                  visited: Set<String>) throws(StrictModesError) -> Set<String> {
        var visited = visited
        var directory = start
        while visited.insert(directory).inserted {
            guard let info = try status(directory, role: role, file: file) else {
                throw StrictModesError(role: role, file: file, path: directory, problem: .cannotCheck(errno: ENOENT))
            }
            guard rootOrDaemon.contains(info.st_uid) else {
                throw StrictModesError(role: role, file: file, path: directory,
                                       problem: .owner(uid: info.st_uid, allowed: rootOrDaemon))
            }
            if info.st_mode & 0o022 != 0, info.st_mode & 0o1000 == 0 {  // writable, and no sticky bit
                throw StrictModesError(role: role, file: file, path: directory,
                                       problem: .directoryWritableByGroupOrOthers(mode: info.st_mode))
            }
            if directory == "/" { break }
            directory = Self.parent(of: directory)
        }
        return visited
    }

    // MARK: - System calls

    /// `stat` (following links), or nil if nothing is there.
    private func status(_ path: String, role: String, file: String) throws(StrictModesError) -> stat? {
        var info = stat()
        if stat(path, &info) == 0 { return info }
        if errno == ENOENT { return nil }
        throw StrictModesError(role: role, file: file, path: path, problem: .cannotCheck(errno: errno))
    }

    /// The absolute path with every symbolic link, `.` and `..` resolved.
    private func resolve(_ path: String, role: String, file: String) throws(StrictModesError) -> String {
        guard let resolved = realpath(path, nil) else {
            throw StrictModesError(role: role, file: file, path: path, problem: .cannotCheck(errno: errno))
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The names in `directory`, without `.` and `..`.
    private func entries(of directory: String, role: String) throws(StrictModesError) -> [String] {
        guard let names = DirectoryListing.names(in: directory) else {
            throw StrictModesError(role: role, file: directory, path: directory, problem: .cannotCheck(errno: errno))
        }
        return names
    }

    /// The directory part of `path` (`.` for a bare name, `/` for a name in the root).
    package static func parent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        let head = trimmed[..<slash]
        return head.isEmpty ? "/" : String(head)
    }
}
