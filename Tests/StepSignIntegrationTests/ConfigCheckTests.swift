import Foundation
import StepSignTestSupport
import Testing

/// `stepsignd --check [--config FILE]` (SPEC §8, issue 42): the real daemon binary reads the
/// configuration and everything it names, prints each problem with file, line and key, exits 0
/// or 78 (EX_CONFIG), and changes nothing, also beside a running daemon.
@Suite("stepsignd --check", .blocking)
struct ConfigCheckTests {
    /// A daemon (not started) whose config file names its own socket and state directory, so
    /// that `--check --config FILE` alone checks what the daemon runs with; `extra` as
    /// ``DaemonHarness/config(_:)`` takes it.
    private func daemon(_ extra: String = "", environment: [String: String] = [:]) throws -> DaemonHarness {
        let daemon = try DaemonHarness(environment: environment, start: false)
        try writeConfig(extra, for: daemon)
        return daemon
    }

    private func writeConfig(_ extra: String, for daemon: DaemonHarness) throws {
        let server = "[server]\nsocket = \"\(daemon.socketPath)\"\nstate_dir = \"\(daemon.stateDirectory)\"\n"
        try DaemonHarness.writeConfig(DaemonHarness.config(server + extra), to: daemon.configPath)
    }

    /// A daemon that started once (its state directory, database and keys exist), stopped.
    private func daemonWithState(_ extra: String = "", environment: [String: String] = [:]) throws -> DaemonHarness {
        let daemon = try self.daemon(extra, environment: environment)
        try daemon.start()
        try daemon.addUser()
        #expect(daemon.stop() == 0)
        return daemon
    }

    /// `stepsignd --check --config FILE`; `forReload`: with `--for-reload`, as the unit's
    /// `ExecReload=` runs it.
    private func check(_ daemon: DaemonHarness, environment: [String: String]? = nil, forReload: Bool = false) throws -> Tools.Result {
        try Tools.run([Binaries.path("stepsignd"), "--check"] + (forReload ? ["--for-reload"] : []) + ["--config", daemon.configPath],
                      environment: environment ?? daemon.environment, timeout: 120)
    }

    /// The 1-based line of the config file that starts with `prefix`.
    private func line(_ daemon: DaemonHarness, _ prefix: String) throws -> Int {
        let lines = try String(contentsOfFile: daemon.configPath, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        return try #require(lines.firstIndex { $0.hasPrefix(prefix) }) + 1
    }

    private func keyFile(_ daemon: DaemonHarness) throws -> String {
        let keys = daemon.stateDirectory + "/keys"
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: keys).first { $0.hasSuffix(".pem") })
        return keys + "/" + name
    }

    /// Every file and directory under `root` with its size, mode and modification time.
    private func snapshot(_ root: String) throws -> [String: String] {
        var files: [String: String] = [:]
        let enumerator = try #require(FileManager.default.enumerator(atPath: root))
        for case let name as String in enumerator {
            var info = stat()
            guard lstat(root + "/" + name, &info) == 0 else { continue }
            files[name] = "\(info.st_size) \(String(info.st_mode, radix: 8)) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
        }
        return files
    }

    @Test("a good configuration exits 0 with one line saying so, before the first start and after it")
    func goodConfiguration() throws {
        let daemon = try self.daemon()
        let fresh = try check(daemon)
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(fresh.stdout.hasPrefix("stepsignd: \(daemon.configPath): configuration ok"), "\(fresh.stdout)")
        #expect(fresh.stderr.isEmpty, "\(fresh.stderr)")
        // Nothing was made: the first start makes the state directory, its keys and database.
        #expect(!FileManager.default.fileExists(atPath: daemon.stateDirectory))

        try daemon.start()
        try daemon.addUser()
        #expect(daemon.stop() == 0)
        let before = try snapshot(daemon.stateDirectory)
        let result = try check(daemon)
        // No file made or removed; none changed but SQLite's shared-memory index (see below).
        let after = try snapshot(daemon.stateDirectory)
        #expect(Set(after.keys) == Set(before.keys))
        for (name, state) in before where !name.hasSuffix("-shm") {
            #expect(after[name] == state, "\(name) changed")
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("configuration ok"), "\(result.stdout)")
        #expect(result.stdout.contains("1 signing key"), "\(result.stdout)")
        #expect(result.stdout.contains("SQLite schema v"), "\(result.stdout)")
        #expect(result.stdout.split(separator: "\n").count == 1, "\(result.stdout)")
    }

    @Test("an unknown key exits 78 naming file, line and key")
    func unknownKey() throws {
        let daemon = try self.daemon("[signing]\nallow_level_zero = true\n")
        let result = try check(daemon)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("\(daemon.configPath):\(try line(daemon, "allow_level_zero")): signing.allow_level_zero: unknown key"),
                "\(result.stderr)")
    }

    @Test("a value out of range exits 78 naming file, line and key")
    func badValue() throws {
        let daemon = try self.daemon("[password]\nmax_attempts = 0\n")
        let result = try check(daemon)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains(
            "\(daemon.configPath):\(try line(daemon, "max_attempts")): password.max_attempts: expected an integer from 1 to 100, found 0"),
                "\(result.stderr)")
    }

    @Test("each problem of the file is named, not only the first")
    func everyProblemOfTheFile() throws {
        let daemon = try self.daemon("[signing]\nallow_level_zero = true\n[password]\nmax_attempts = 0\n[lda]\nenroll_fresh_seconds = \"soon\"\n")
        let result = try check(daemon)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("\(daemon.configPath):\(try line(daemon, "allow_level_zero")): signing.allow_level_zero: "), "\(result.stderr)")
        #expect(result.stderr.contains("\(daemon.configPath):\(try line(daemon, "max_attempts")): password.max_attempts: "), "\(result.stderr)")
        #expect(result.stderr.contains("\(daemon.configPath):\(try line(daemon, "enroll_fresh_seconds")): lda.enroll_fresh_seconds: "), "\(result.stderr)")
        #expect(result.stderr.contains("stepsignd: \(daemon.configPath): 3 problems"), "\(result.stderr)")
        // In the order of the file.
        let keys = result.stderr.split(separator: "\n").compactMap { line in
            ["signing.allow_level_zero", "password.max_attempts", "lda.enroll_fresh_seconds"].first { line.contains(": \($0): ") }
        }
        #expect(keys == ["lda.enroll_fresh_seconds", "password.max_attempts", "signing.allow_level_zero"], "\(result.stderr)")
    }

    @Test("a key file the configuration names that is missing exits 78 naming file, line, key and the file")
    func missingKeyFile() throws {
        let daemon = try self.daemon("[idv]\nissuer = \"https://idv.example\"\ntrusted_keys = \"/nonexistent/idv-keys.pem\"\n")
        let result = try check(daemon)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("\(daemon.configPath):\(try line(daemon, "trusted_keys")): idv.trusted_keys: "), "\(result.stderr)")
        #expect(result.stderr.contains("/nonexistent/idv-keys.pem"), "\(result.stderr)")
    }

    @Test("a signing key file others may read exits 78 naming the state directory's line and the key file")
    func keyFileWithWrongMode() throws {
        let daemon = try daemonWithState()
        let key = try keyFile(daemon)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: key)
        let result = try check(daemon)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("\(daemon.configPath):\(try line(daemon, "state_dir")): server.state_dir: "), "\(result.stderr)")
        #expect(result.stderr.contains("key file \(key) is accessible by group or others (mode 0644)"), "\(result.stderr)")
        // Reported, not repaired.
        let mode = try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int
        #expect(mode == 0o644)
    }

    @Test("each problem is named, not only the first")
    func everyProblem() throws {
        let daemon = try daemonWithState()
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: try keyFile(daemon))
        try writeConfig("[cluster]\nroot_key = \"/nonexistent/cluster-root.pem\"\n", for: daemon)
        let result = try check(daemon)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("\(daemon.configPath):\(try line(daemon, "root_key")): cluster.root_key: "), "\(result.stderr)")
        #expect(result.stderr.contains("\(daemon.configPath):\(try line(daemon, "state_dir")): server.state_dir: "), "\(result.stderr)")
        #expect(result.stderr.contains("stepsignd: \(daemon.configPath): 2 problems"), "\(result.stderr)")
    }

    @Test("a PostgreSQL that cannot be reached exits 78 naming its host's line, and the password is not printed")
    func unreachablePostgreSQL() throws {
        let daemon = try self.daemon()
        let secret = "Unprinted-Db-Pw-7c1e"
        let passwordFile = daemon.directory.appendingPathComponent("db-password").path
        let sealFile = daemon.directory.appendingPathComponent("seal.key").path
        try (secret + "\n").write(toFile: passwordFile, atomically: true, encoding: .utf8)
        try (Data((0..<32).map { UInt8($0) }).base64EncodedString() + "\n").write(toFile: sealFile, atomically: true, encoding: .utf8)
        for path in [passwordFile, sealFile] {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        }
        // A port nothing listens on: bound, then closed.
        let port = try Self.closedPort()
        try writeConfig("""
            [storage]
            backend = "postgresql"
            seal_key_file = "\(sealFile)"
            [storage.postgresql]
            host = "127.0.0.1"
            port = \(port)
            password_file = "\(passwordFile)"
            """, for: daemon)
        let result = try check(daemon)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("\(daemon.configPath):\(try line(daemon, "host")): storage.postgresql.host: PostgreSQL at 127.0.0.1:\(port)"),
                "\(result.stderr)")
        #expect(!(result.stdout + result.stderr).contains(secret))
        #expect(!FileManager.default.fileExists(atPath: daemon.stateDirectory))
    }

    @Test("for a reload, a PostgreSQL that is down is not a problem (a reload keeps the connections), but the files still are")
    func unreachablePostgreSQLForReload() throws {
        let daemon = try self.daemon()
        let passwordFile = daemon.directory.appendingPathComponent("db-password").path
        let sealFile = daemon.directory.appendingPathComponent("seal.key").path
        try "Unprinted-Db-Pw-5d2a\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        try (Data((0..<32).map { UInt8($0) }).base64EncodedString() + "\n").write(toFile: sealFile, atomically: true, encoding: .utf8)
        for path in [passwordFile, sealFile] {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        }
        let port = try Self.closedPort()
        try writeConfig("""
            [storage]
            backend = "postgresql"
            seal_key_file = "\(sealFile)"
            [storage.postgresql]
            host = "127.0.0.1"
            port = \(port)
            password_file = "\(passwordFile)"
            """, for: daemon)
        let reload = try check(daemon, forReload: true)
        #expect(reload.status == 0, "\(reload.stderr)")
        #expect(reload.stdout.contains("PostgreSQL 127.0.0.1:\(port) not contacted (a reload keeps the daemon's connections)"),
                "\(reload.stdout)")
        // The plain check (before a start) still reports it.
        let plain = try check(daemon)
        #expect(plain.status == 78, "\(plain.stderr)")
        #expect(plain.stderr.contains("storage.postgresql.host: PostgreSQL at 127.0.0.1:\(port)"), "\(plain.stderr)")
        // What a reload applies is still checked: a bad value, and a file the configuration names.
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: passwordFile)
        let badFile = try check(daemon, forReload: true)
        #expect(badFile.status == 78, "\(badFile.stderr)")
        #expect(badFile.stderr.contains("storage.postgresql.password_file: "), "\(badFile.stderr)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: passwordFile)
        try writeConfig("[password]\nmax_attempts = 0\n[storage]\nbackend = \"postgresql\"\nseal_key_file = \"\(sealFile)\"\n"
                        + "[storage.postgresql]\nhost = \"127.0.0.1\"\nport = \(port)\npassword_file = \"\(passwordFile)\"\n", for: daemon)
        let badValue = try check(daemon, forReload: true)
        #expect(badValue.status == 78, "\(badValue.stderr)")
        #expect(badValue.stderr.contains("password.max_attempts: "), "\(badValue.stderr)")
    }

    @Test("for a reload, the PKCS#11 token is not logged in to again (restart-only, the daemon holds its sessions)")
    func tokenForReload() throws {
        let token = try SoftHSMToken()
        defer { token.remove() }
        let (daemon, pinFile) = try daemonOnToken(token)
        try Self.writePIN("9999-wrong", to: pinFile)
        let reload = try check(daemon, forReload: true)
        #expect(reload.status == 0, "\(reload.stderr)")
        #expect(reload.stdout.contains("keys and their credentials not opened"), "\(reload.stdout)")
        #expect(try check(daemon).status == 78)
    }

    @Test("--for-reload goes with --check only")
    func forReloadAlone() throws {
        let result = try Tools.run([Binaries.path("stepsignd"), "--for-reload", "--config", "/nonexistent.toml"], timeout: 60)
        #expect(result.status != 0 && result.status != 78, "\(result.stderr)")
        #expect(result.stderr.contains("--for-reload goes with --check"), "\(result.stderr)")
    }

    @Test("a SQLite database of a newer schema than this build exits 78 naming the database and the unknown migration")
    func newerSQLiteSchema() throws {
        let daemon = try daemonWithState()
        let database = daemon.stateDirectory + "/stepsign.sqlite"
        let insert = try Tools.run(["sqlite3", database, "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-a-newer-stepsignd')"],
                                   timeout: 60)
        #expect(insert.status == 0, "\(insert.stderr)")
        // sqlite3 closed it cleanly (no -wal, no -shm): the check opens it immutable, making neither.
        let files = try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory).sorted()
        #expect(!files.contains("stepsign.sqlite-wal"), "\(files)")
        let result = try check(daemon)
        #expect(try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory).sorted() == files)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("\(daemon.configPath):\(try line(daemon, "state_dir")): server.state_dir: the SQLite database \(database) was written by a newer stepsignd"),
                "\(result.stderr)")
        #expect(result.stderr.contains("v99-from-a-newer-stepsignd"), "\(result.stderr)")
        // The start refuses it too, with the same words (it ran on it before).
        try daemon.start(waitForSocket: false)
        let status = daemon.process?.wait(timeout: 60)
        if status == nil { daemon.stop(signal: SIGKILL) }
        #expect(status == 78, "\(daemon.log)")
        #expect(daemon.log.contains("stepsignd: cannot open the SQLite store \(database): the SQLite database \(database) was written by a newer stepsignd"),
                "\(daemon.log)")
    }

    @Test("beside a running daemon on the same state directory: exits 0, changes no file, and the daemon serves on")
    func besideARunningDaemon() throws {
        // No timed checkpoint while the files are compared: only requests change them.
        let daemon = try self.daemon("[ledger]\ncheckpoint_seconds = 86400\n")
        try daemon.start()
        try daemon.addUser()
        let before = try snapshot(daemon.directory.path)
        let result = try check(daemon)
        #expect(result.status == 0, "\(result.stderr)")
        let after = try snapshot(daemon.directory.path)
        // SQLite's shared-memory index (-shm) is written by every reader of a WAL database (it
        // is rebuilt from the WAL, and holds no data). Everything else is as it was, and no
        // file was added or removed.
        #expect(Set(after.keys) == Set(before.keys))
        for (name, state) in before where !name.hasSuffix("-shm") && !name.hasSuffix("stepsignd.log") {
            #expect(after[name] == state, "\(name) changed")
        }
        #expect(try daemon.connect().call("status").code == 0)
        #expect(daemon.stop() == 0)
    }

    @Test("encrypted keys and a wrong passphrase credential: 78 naming the key file, and neither passphrase printed")
    func wrongPassphraseNotPrinted() throws {
        let credentials = try TemporaryDirectory("credentials", mode: 0o700)
        defer { credentials.remove() }
        let right = "Right-Passphrase-Kiwi-31"
        let wrong = "Wrong-Passphrase-Fig-47"
        let credential = credentials.appending("stepsign-key-passphrase")
        try (right + "\n").write(toFile: credential, atomically: true, encoding: .utf8)
        let daemon = try daemonWithState(environment: ["CREDENTIALS_DIRECTORY": credentials.path])
        let good = try check(daemon)
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout.contains("encrypted"), "\(good.stdout)")
        try (wrong + "\n").write(toFile: credential, atomically: true, encoding: .utf8)
        let result = try check(daemon)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("server.state_dir: key file \(daemon.stateDirectory)/keys/"), "\(result.stderr)")
        for secret in [right, wrong] {
            #expect(!(result.stdout + result.stderr + good.stdout + good.stderr).contains(secret))
        }
    }

    @Test("for a reload, keys and their credentials are not opened: an unreadable passphrase credential fails only the plain check")
    func keysForReload() throws {
        let credentials = try TemporaryDirectory("credentials", mode: 0o700)
        defer { credentials.remove() }
        let credential = credentials.appending("stepsign-key-passphrase")
        try "Right-Passphrase-Plum-58\n".write(toFile: credential, atomically: true, encoding: .utf8)
        let daemon = try daemonWithState(environment: ["CREDENTIALS_DIRECTORY": credentials.path])
        // As systemd 252 gives an ExecReload= process: a credential it may not read.
        try FileManager.default.removeItem(atPath: credential)
        try FileManager.default.createDirectory(atPath: credential, withIntermediateDirectories: false)
        let reload = try check(daemon, forReload: true)
        #expect(reload.status == 0, "\(reload.stderr)")
        #expect(reload.stdout.contains("keys and their credentials not opened"), "\(reload.stdout)")
        #expect(try check(daemon).status == 78)
    }

    /// A daemon on `token` (`key_store = "pkcs11"`, the PIN in a 0600 `pin_file`) that started
    /// once, so that its signing and log keys are in the token, stopped.
    private func daemonOnToken(_ token: SoftHSMToken) throws -> (DaemonHarness, pinFile: String) {
        let daemon = try DaemonHarness(environment: token.environment, start: false)
        let pinFile = daemon.directory.appendingPathComponent("pkcs11.pin").path
        try Self.writePIN(token.pin, to: pinFile)
        try writeConfig(Self.tokenSection(token, pinFile: pinFile), for: daemon)
        try daemon.start()
        #expect(daemon.stop() == 0)
        return (daemon, pinFile)
    }

    /// Writes `pin` (and a newline) to a 0600 `pinFile`, as strict modes want it.
    private static func writePIN(_ pin: String, to pinFile: String) throws {
        try (pin + "\n").write(toFile: pinFile, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: pinFile)
    }

    private static func tokenSection(_ token: SoftHSMToken, pinFile: String, module: String = SoftHSMToken.modulePath) -> String {
        "[signing]\nkey_store = \"pkcs11\"\n[signing.pkcs11]\nmodule = \"\(module)\"\ntoken_label = \"\(token.label)\"\n"
            + "pin_file = \"\(pinFile)\"\n"
    }

    @Test("a PKCS#11 token that holds the keys keys/ names, with the right PIN: exits 0, and nothing is made in the token")
    func goodToken() throws {
        let token = try SoftHSMToken()
        defer { token.remove() }
        let (daemon, _) = try daemonOnToken(token)
        let files = try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory + "/keys")
        #expect(files.contains { $0.hasSuffix(".pkcs11") } && files.contains("log-ed25519.token"), "\(files)")
        let objects = try token.listObjects()
        let result = try check(daemon)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("1 signing key, PKCS#11 token \"\(token.label)\""), "\(result.stdout)")
        #expect(try token.listObjects() == objects)
    }

    @Test("a wrong PKCS#11 PIN exits 78 naming signing.pkcs11.pin_file at its line, and no PIN is printed")
    func wrongTokenPIN() throws {
        let token = try SoftHSMToken()
        defer { token.remove() }
        let (daemon, pinFile) = try daemonOnToken(token)
        let wrong = "9999-wrong"
        try Self.writePIN(wrong, to: pinFile)
        let result = try check(daemon)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("\(daemon.configPath):\(try line(daemon, "pin_file")): signing.pkcs11.pin_file: the token refused the PIN from the PIN file \(pinFile)"),
                "\(result.stderr)")
        for secret in [wrong, token.pin] {
            #expect(!(result.stdout + result.stderr).contains(secret))
        }
    }

    @Test("a PKCS#11 token without the keys keys/ names exits 78 naming the key's record")
    func tokenWithoutTheKeys() throws {
        let token = try SoftHSMToken()
        defer { token.remove() }
        let (daemon, _) = try daemonOnToken(token)
        // Another token of the same label and PIN: found and logged in to, but it holds no key.
        let other = try SoftHSMToken()
        defer { other.remove() }
        let result = try check(daemon, environment: daemon.environment.merging(other.environment) { $1 })
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("server.state_dir: \(daemon.stateDirectory)/keys/"), "\(result.stderr)")
        #expect(result.stderr.contains(".pkcs11: PKCS#11"), "\(result.stderr)")
        #expect(!(try other.listObjects()).contains("Private Key Object"))
    }

    @Test("a PKCS#11 module that cannot be loaded exits 78 naming signing.pkcs11.module")
    func missingTokenModule() throws {
        let token = try SoftHSMToken()
        defer { token.remove() }
        let (daemon, pinFile) = try daemonOnToken(token)
        try writeConfig(Self.tokenSection(token, pinFile: pinFile, module: "/nonexistent/libpkcs11-missing.so"), for: daemon)
        let result = try check(daemon)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("\(daemon.configPath):\(try line(daemon, "module")): signing.pkcs11.module: "), "\(result.stderr)")
        #expect(result.stderr.contains("/nonexistent/libpkcs11-missing.so"), "\(result.stderr)")
    }

    @Test("an SSH agent socket in a directory that does not exist exits 78 naming ssh_agent.socket at its line")
    func agentSocketInMissingDirectory() throws {
        let daemon = try self.daemon()
        let socket = daemon.directory.appendingPathComponent("missing/agent.sock").path
        try writeConfig("[ssh_agent]\nsocket = \"\(socket)\"\n", for: daemon)
        let result = try check(daemon)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("\(daemon.configPath):\(try line(daemon, "socket = \"\(socket)")): ssh_agent.socket: "),
                "\(result.stderr)")
        #expect(result.stderr.contains(daemon.directory.appendingPathComponent("missing").path), "\(result.stderr)")

        // In a directory that exists: the agent is named in the summary.
        let present = daemon.directory.appendingPathComponent("agent.sock").path
        try writeConfig("[ssh_agent]\nsocket = \"\(present)\"\n", for: daemon)
        let good = try check(daemon)
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout.contains("SSH agent on \(present)"), "\(good.stdout)")
    }

    @Test("an SSH agent namespace the reader refuses exits 78 naming ssh_agent.namespaces at its line")
    func agentBadNamespace() throws {
        let daemon = try self.daemon("[ssh_agent]\nsocket = \"/run/stepsign-test-none/agent.sock\"\nnamespaces = [\"git\", \"two words\"]\n")
        let result = try check(daemon)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("\(daemon.configPath):\(try line(daemon, "namespaces")): ssh_agent.namespaces: "), "\(result.stderr)")
    }

    @Test("the help, which the man page stepsignd(8) is rendered from, says what --check reads, prints and exits with")
    func helpAndManPage() throws {
        let result = try Tools.run([Binaries.path("stepsignd"), "--help"], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let text = result.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for phrase in ["stepsignd --check [--config FILE]", "--check", "FILE:LINE: KEY:", "the exit status is 78",
                       "the exit status is 0", "without taking the state directory's lock", "ExecReload=",
                       "--for-reload"] {
            #expect(text.contains(phrase), "\(phrase) missing from: \(result.stdout)")
        }
    }

    /// A loopback TCP port that nothing listens on.
    private static func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(fd, socketAddress, length) == 0 && getsockname(fd, socketAddress, &length) == 0
            }
        }
        #expect(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
