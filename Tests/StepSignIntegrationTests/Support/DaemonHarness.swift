import Foundation
import StepSignTestSupport
import StepSignClient
import Synchronization

/// A real `stepsignd` on a temporary socket and state directory, for one test.
final class DaemonHarness: @unchecked Sendable {
    let directory: URL
    let socketPath: String
    let stateDirectory: String
    let configPath: String
    let logPath: String
    /// Variables added to the daemon's environment (`NOTIFY_SOCKET`, `CREDENTIALS_DIRECTORY`, …).
    var environment: [String: String]
    private(set) var process: Subprocess?
    /// Outbox lines per user that `lastActivationCode` has returned.
    let outboxSeen = Mutex<[String: Int]>([:])

    /// The ledger entries a fresh daemon writes before any request (SPEC §5.4): the event of
    /// the signing key it made and that of the configuration it loaded. Each later start adds
    /// one (the configuration loaded).
    static let startEvents = 2

    /// The demo user every harness can add.
    static let user = "alice"
    static let password = "Tr1cky-Pelican-42"

    /// Writes a config with `settings` (TOML lines appended under the right tables) and starts the daemon.
    init(config extra: String = "", environment: [String: String] = [:], start: Bool = true) throws {
        self.environment = environment
        // Explicit modes, whatever the umask: strict modes (SPEC §7) refuse a config file or a
        // directory on its way that group or others may write.
        directory = try TemporaryDirectory("daemon", mode: 0o755).url
        socketPath = directory.appendingPathComponent("s.sock").path
        stateDirectory = directory.appendingPathComponent("state").path
        configPath = directory.appendingPathComponent("stepsignd.toml").path
        logPath = directory.appendingPathComponent("stepsignd.log").path
        try Self.writeConfig(Self.config(extra), to: configPath)
        if start { try self.start() }
    }

    /// Writes a config file 0644 (readable by a daemon run as another uid, writable only by its owner).
    static func writeConfig(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
    }

    /// A config for tests: the caller (root in CI, or whoever runs the tests) is an admin.
    static func config(_ extra: String) -> String {
        let uid = getuid()
        var tables: [String: [String]] = [
            "": ["instance = \"stepsign-test\""],
            "server": ["socket_group = \"\"", "idle_timeout_seconds = 300"],
            "access": ["client_uids = [\(uid)]", "client_groups = []", "admin_uids = [\(uid)]", "admin_groups = []"],
            "signing": ["allow_level_0 = true"],
            "password": ["scrypt_n = 1024", "max_age_days = 90"],
            "log": ["level = \"debug\""],
        ]
        var current = ""
        for line in extra.split(separator: "\n", omittingEmptySubsequences: true) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("[") {
                current = String(trimmed.dropFirst().dropLast())
                continue
            }
            let key = trimmed.split(separator: "=").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            tables[current, default: []].removeAll { $0.hasPrefix(key + " ") || $0.hasPrefix(key + "=") }
            tables[current, default: []].append(trimmed)
        }
        var text = (tables[""] ?? []).joined(separator: "\n") + "\n"
        for name in tables.keys.sorted() where !name.isEmpty {
            text += "\n[\(name)]\n" + tables[name]!.joined(separator: "\n") + "\n"
        }
        return text
    }

    /// Starts the daemon and, unless `waitForSocket` is false, waits until its socket answers.
    func start(waitForSocket: Bool = true) throws {
        let process = try Subprocess(
            executable: Binaries.path("stepsignd"),
            arguments: ["--config", configPath, "--socket", socketPath, "--state-dir", stateDirectory],
            logPath: logPath, environment: environment
        )
        self.process = process
        guard waitForSocket else { return }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let status = process.wait(timeout: 0) {
                throw HarnessError.exited(status, log: self.log)
            }
            if let connection = try? StepSignConnection(socketPath: socketPath),
               (try? connection.call("status", timeout: 10)) != nil {
                return
            }
            usleep(20_000)
        }
        throw HarnessError.notReady(log: self.log)
    }

    /// A new connection (a new session).
    func connect() throws -> StepSignConnection {
        try StepSignConnection(socketPath: socketPath)
    }

    /// Sends `signal` and waits for the exit; returns the exit code (128+N when killed by
    /// signal N), or -1 if it did not exit within a minute.
    @discardableResult
    func stop(signal: Int32 = SIGTERM) -> Int32 {
        guard let process else { return 0 }
        process.signal(signal)
        let status = process.wait(timeout: 60) ?? -1
        self.process = nil
        return status
    }

    /// Everything the daemon wrote to stderr so far.
    var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// Adds the demo user through `admin.addUser`.
    func addUser(_ user: String = DaemonHarness.user, password: String = DaemonHarness.password) throws {
        let reply = try connect().call("admin.addUser", ["user": user, "password": password])
        guard reply.code == 0 else { throw HarnessError.refused(reply.code, reply.message) }
    }

    deinit {
        stop(signal: SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }
}

enum HarnessError: Error, CustomStringConvertible {
    case exited(Int32, log: String)
    case notReady(log: String)
    case refused(Int, String)

    var description: String {
        switch self {
        case let .exited(status, log): "stepsignd exited with \(status):\n\(log)"
        case let .notReady(log): "stepsignd did not answer in time:\n\(log)"
        case let .refused(code, message): "refused: \(code) \(message)"
        }
    }
}
