import Foundation
import StepSignClient
import StepSignTestSupport
import Testing

/// Strict modes (SPEC §7, as sshd's `StrictModes`): the daemon refuses to start (exit 78,
/// naming the path) on state that others could have written, and a reload keeps the
/// configuration in force. The files are real, owned by another uid (`chown 65534`) or with
/// loose modes, so these need root.
@Suite("Strict modes", .blocking, .enabled(if: getuid() == 0, "needs root to chown files to another uid"))
struct StrictModesTests {
    static let nobody: UInt32 = 65534

    /// Starts `daemon`, which must refuse: returns its exit status and what it wrote.
    private func refusedStart(_ daemon: DaemonHarness) throws -> (status: Int32, log: String) {
        try daemon.start(waitForSocket: false)
        guard let status = daemon.process?.wait(timeout: 60) else {
            daemon.stop(signal: SIGKILL)
            Issue.record("stepsignd did not exit: \(daemon.log)")
            return (-1, daemon.log)
        }
        return (status, daemon.log)
    }

    private func chmod(_ path: String, _ mode: Int) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    private func chown(_ path: String, _ uid: UInt32) throws {
        try FileManager.default.setAttributes([.ownerAccountID: uid], ofItemAtPath: path)
    }

    /// A daemon that ran once (so the state directory, database and key file exist), stopped.
    private func daemonWithState(config: String = "") throws -> DaemonHarness {
        let daemon = try DaemonHarness(config: config)
        try daemon.addUser()
        #expect(daemon.stop() == 0)
        return daemon
    }

    private var keyFile: (DaemonHarness) throws -> String {
        { daemon in
            let keys = daemon.stateDirectory + "/keys"
            let name = try #require(try FileManager.default.contentsOfDirectory(atPath: keys).first { $0.hasSuffix(".pem") })
            return keys + "/" + name
        }
    }

    // MARK: - State

    @Test("an existing state directory at 0777 is refused with 78 naming it, not used (the issue's swapped database)")
    func stateDirectoryWorldWritable() throws {
        let daemon = try daemonWithState()
        try chmod(daemon.stateDirectory, 0o777)
        let result = try refusedStart(daemon)
        #expect(result.status == 78, "\(result.log)")
        #expect(result.log.contains("state directory \(daemon.stateDirectory) is writable by group or others (mode 0777)"), "\(result.log)")
        // Refused before anything was opened or tightened.
        let mode = try FileManager.default.attributesOfItem(atPath: daemon.stateDirectory)[.posixPermissions] as? Int
        #expect(mode == 0o777)
    }

    @Test("a fresh state directory at 0777 (made by someone else before the first start) is refused too")
    func freshStateDirectoryWorldWritable() throws {
        let daemon = try DaemonHarness(start: false)
        try FileManager.default.createDirectory(atPath: daemon.stateDirectory, withIntermediateDirectories: false)
        try chmod(daemon.stateDirectory, 0o777)
        let result = try refusedStart(daemon)
        #expect(result.status == 78, "\(result.log)")
        #expect(result.log.contains(daemon.stateDirectory), "\(result.log)")
    }

    @Test("a state directory owned by another uid is refused, even at 0700")
    func stateDirectoryOtherOwner() throws {
        let daemon = try daemonWithState()
        try chown(daemon.stateDirectory, Self.nobody)
        let result = try refusedStart(daemon)
        #expect(result.status == 78, "\(result.log)")
        #expect(result.log.contains("state directory \(daemon.stateDirectory) is owned by uid \(Self.nobody)"), "\(result.log)")
    }

    @Test("a database file owned by another uid is refused with 78 naming it")
    func databaseOtherOwner() throws {
        let daemon = try daemonWithState()
        let database = daemon.stateDirectory + "/stepsign.sqlite"
        try chown(database, Self.nobody)
        let result = try refusedStart(daemon)
        #expect(result.status == 78, "\(result.log)")
        #expect(result.log.contains("database \(database) is owned by uid \(Self.nobody)"), "\(result.log)")
    }

    @Test("a database file at 0666 is refused (no longer tightened silently)")
    func databaseWorldWritable() throws {
        let daemon = try daemonWithState()
        let database = daemon.stateDirectory + "/stepsign.sqlite"
        try chmod(database, 0o666)
        let result = try refusedStart(daemon)
        #expect(result.status == 78, "\(result.log)")
        #expect(result.log.contains("database \(database) is writable by group or others (mode 0666)"), "\(result.log)")
    }

    @Test("keys/ at 0777 is refused with 78 naming it")
    func keysDirectoryWorldWritable() throws {
        let daemon = try daemonWithState()
        try chmod(daemon.stateDirectory + "/keys", 0o777)
        let result = try refusedStart(daemon)
        #expect(result.status == 78, "\(result.log)")
        #expect(result.log.contains("keys directory \(daemon.stateDirectory)/keys is writable"), "\(result.log)")
    }

    @Test("a key file readable by others (0644) or owned by another uid is refused with 78 naming it")
    func keyFileTooOpen() throws {
        let daemon = try daemonWithState()
        let key = try keyFile(daemon)
        try chmod(key, 0o644)
        var result = try refusedStart(daemon)
        #expect(result.status == 78, "\(result.log)")
        #expect(result.log.contains("key file \(key) is accessible by group or others (mode 0644)"), "\(result.log)")
        try chmod(key, 0o600)
        try chown(key, Self.nobody)
        result = try refusedStart(daemon)
        #expect(result.status == 78, "\(result.log)")
        #expect(result.log.contains("key file \(key) is owned by uid \(Self.nobody)"), "\(result.log)")
    }

    @Test("run as uid 65534 (setpriv), a state directory owned by root is refused: it must be the daemon's own",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs setpriv"))
    func stateOwnedByRootForUnprivilegedDaemon() throws {
        let daemon = try DaemonHarness(start: false)
        try FileManager.default.createDirectory(atPath: daemon.stateDirectory, withIntermediateDirectories: false)
        try chmod(daemon.stateDirectory, 0o755)
        let process = try Subprocess(
            executable: "/usr/bin/setpriv",
            arguments: ["--reuid=\(Self.nobody)", "--regid=\(Self.nobody)", "--clear-groups", Binaries.path("stepsignd"),
                        "--config", daemon.configPath, "--socket", daemon.directory.path + "/nobody.sock",
                        "--state-dir", daemon.stateDirectory],
            logPath: daemon.logPath)
        guard let status = process.wait(timeout: 60) else {
            process.signal(SIGKILL)
            _ = process.wait(timeout: 10)
            Issue.record("stepsignd as nobody did not exit: \(daemon.log)")
            return
        }
        #expect(status == 78, "\(daemon.log)")
        #expect(daemon.log.contains("state directory \(daemon.stateDirectory) is owned by uid 0; it must belong to uid \(Self.nobody)"),
                "\(daemon.log)")
    }

    // MARK: - Trusted inputs

    @Test("a configuration file at 0666 is refused with 78 naming it")
    func configWorldWritable() throws {
        let daemon = try DaemonHarness(start: false)
        try chmod(daemon.configPath, 0o666)
        let result = try refusedStart(daemon)
        #expect(result.status == 78, "\(result.log)")
        #expect(result.log.contains("configuration file \(daemon.configPath) is writable by group or others (mode 0666)"), "\(result.log)")
    }

    @Test("a configuration file owned by another uid is refused, even at 0644")
    func configOtherOwner() throws {
        let daemon = try DaemonHarness(start: false)
        try chown(daemon.configPath, Self.nobody)
        let result = try refusedStart(daemon)
        #expect(result.status == 78, "\(result.log)")
        #expect(result.log.contains("configuration file \(daemon.configPath) is owned by uid \(Self.nobody); it must belong to root"),
                "\(result.log)")
    }

    @Test("idv.trusted_keys owned by another uid is refused with 78 naming it (its owner could mint level-4 assertions)")
    func trustedKeysOtherOwner() throws {
        let idv = try TestIDVServer()
        try chown(idv.pemPath, Self.nobody)
        let daemon = try DaemonHarness(config: idv.config(), start: false)
        let result = try refusedStart(daemon)
        #expect(result.status == 78, "\(result.log)")
        #expect(result.log.contains("idv.trusted_keys \(idv.pemPath) is owned by uid \(Self.nobody)"), "\(result.log)")
    }

    @Test("a notifier program writable by its group (0775) is refused with 78 naming it")
    func notifierGroupWritable() throws {
        let daemon = try DaemonHarness(start: false)
        let program = daemon.directory.path + "/send-code"
        try "#!/bin/sh\ncat >/dev/null\n".write(toFile: program, atomically: true, encoding: .utf8)
        try chmod(program, 0o775)
        try DaemonHarness.writeConfig(DaemonHarness.config("[forgot_password]\nenabled = true\nnotifier = [\"\(program)\"]"),
                                      to: daemon.configPath)
        let result = try refusedStart(daemon)
        #expect(result.status == 78, "\(result.log)")
        #expect(result.log.contains("forgot_password.notifier program \(program) is writable by group or others (mode 0775)"),
                "\(result.log)")
    }

    @Test("a common-password file at 0666 is refused with 78 naming it")
    func commonPasswordsWorldWritable() throws {
        let daemon = try DaemonHarness(start: false)
        let list = daemon.directory.path + "/common.txt"
        try "password\n123456\n".write(toFile: list, atomically: true, encoding: .utf8)
        try chmod(list, 0o666)
        try DaemonHarness.writeConfig(DaemonHarness.config("[password]\ncommon_passwords_file = \"\(list)\""),
                                      to: daemon.configPath)
        let result = try refusedStart(daemon)
        #expect(result.status == 78, "\(result.log)")
        #expect(result.log.contains("password.common_passwords_file \(list) is writable by group or others"), "\(result.log)")
    }

    @Test("a directory on the way that others may write (0777, no sticky bit) is refused, naming that directory")
    func parentDirectoryWorldWritable() throws {
        let daemon = try DaemonHarness(start: false)
        try chmod(daemon.directory.path, 0o777)
        let result = try refusedStart(daemon)
        #expect(result.status == 78, "\(result.log)")
        #expect(result.log.contains(": directory \(daemon.directory.path) is writable by group or others without the sticky bit"),
                "\(result.log)")
    }

    @Test("a sticky world-writable directory on the way (1777, as /tmp) is accepted")
    func stickyParentAccepted() throws {
        let daemon = try DaemonHarness(start: false)
        try chmod(daemon.directory.path, 0o1777)
        try daemon.start()
        #expect(try daemon.connect().call("status").code == 0)
    }

    @Test("a symbolic link to a configuration file in a directory owned by another uid is refused, naming that directory")
    func symlinkIntoForeignDirectory() throws {
        let daemon = try DaemonHarness(start: false)
        let foreign = daemon.directory.path + "/foreign"
        try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: false)
        try FileManager.default.moveItem(atPath: daemon.configPath, toPath: foreign + "/stepsignd.toml")
        try FileManager.default.createSymbolicLink(atPath: daemon.configPath, withDestinationPath: foreign + "/stepsignd.toml")
        try chown(foreign, Self.nobody)
        let result = try refusedStart(daemon)
        #expect(result.status == 78, "\(result.log)")
        #expect(result.log.contains("configuration file \(daemon.configPath): directory \(foreign) is owned by uid \(Self.nobody)"),
                "\(result.log)")
    }

    // MARK: - Socket

    /// Starts `daemon` with its socket at `socket` instead of the harness's.
    private func start(_ daemon: DaemonHarness, socket: String) throws -> Subprocess {
        try Subprocess(executable: Binaries.path("stepsignd"),
                       arguments: ["--config", daemon.configPath, "--socket", socket, "--state-dir", daemon.stateDirectory],
                       logPath: daemon.logPath)
    }

    @Test("a socket in a directory others may write (0777, no sticky bit) is refused with 78 naming that directory")
    func socketDirectoryWorldWritable() throws {
        let daemon = try DaemonHarness(start: false)
        let shared = daemon.directory.path + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
        try chmod(shared, 0o777)
        let socket = shared + "/s.sock"
        let process = try start(daemon, socket: socket)
        guard let status = process.wait(timeout: 60) else {
            process.signal(SIGKILL)
            _ = process.wait(timeout: 10)
            Issue.record("stepsignd did not exit: \(daemon.log)")
            return
        }
        #expect(status == 78, "\(daemon.log)")
        #expect(daemon.log.contains("server.socket \(socket): directory \(shared) is writable by group or others without the sticky bit (mode 0777)"),
                "\(daemon.log)")
        #expect(!FileManager.default.fileExists(atPath: socket), "the socket was bound before the check")
    }

    @Test("a socket in a root-owned sticky world-writable directory (1777, as /tmp) is accepted, with its configured mode")
    func socketDirectorySticky() throws {
        let daemon = try DaemonHarness(start: false)
        let shared = daemon.directory.path + "/sticky"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
        try chmod(shared, 0o1777)
        try chown(shared, 0)
        let socket = shared + "/s.sock"
        let process = try start(daemon, socket: socket)
        defer {
            process.signal(SIGTERM)
            _ = process.wait(timeout: 60)
        }
        var reply: ClientReply?
        for _ in 0..<600 where reply == nil && process.isRunning {
            reply = try? StepSignConnection(socketPath: socket).call("status", timeout: 10)
            if reply == nil { usleep(50_000) }
        }
        #expect(reply?.code == 0, "\(daemon.log)")
        let mode = try FileManager.default.attributesOfItem(atPath: socket)[.posixPermissions] as? Int
        #expect(mode == 0o660)
    }

    // MARK: - Reload

    @Test("a reload with idv.trusted_keys made world-writable keeps the old configuration, and the log says why")
    func reloadKeepsOldOnLooseTrustedKeys() throws {
        let idv = try TestIDVServer()
        let daemon = try DaemonHarness(config: idv.config())
        let connection = try daemon.connect()
        try chmod(idv.pemPath, 0o666)
        // The new file also turns level 0 off: it must not be in force.
        #expect(try daemon.reload(config: idv.config() + "\n[signing]\nallow_level_0 = false") == .keptOld)
        let line = try #require(daemon.logLines(message: "configuration not reloaded, keeping the one in force").last)
        #expect(line.contains("idv.trusted_keys \(idv.pemPath) is writable by group or others (mode 0666)"), "\(line)")
        let signed = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "p", "reason": "r", "authLevel": 0, "authenticatorType": 0,
        ])
        #expect(signed.code == 0, "\(signed.message)")
        // Fixed, the same file reloads.
        try chmod(idv.pemPath, 0o644)
        #expect(try daemon.reload(config: idv.config() + "\n[signing]\nallow_level_0 = false") == .reloaded)
    }

    @Test("a reload of a configuration file owned by another uid keeps the old configuration")
    func reloadKeepsOldOnForeignConfig() throws {
        let daemon = try DaemonHarness()
        try DaemonHarness.writeConfig(DaemonHarness.config("[signing]\nallow_level_0 = false"), to: daemon.configPath)
        try chown(daemon.configPath, Self.nobody)
        #expect(try daemon.reloadAsIs() == .keptOld)
        let line = try #require(daemon.logLines(message: "configuration not reloaded, keeping the one in force").last)
        #expect(line.contains("configuration file \(daemon.configPath) is owned by uid \(Self.nobody)"), "\(line)")
    }
}
