import Foundation
import StepSignTestSupport
import Testing

/// `stepsignd --config FILE`: a bad file is refused at start, naming the file, line and key.
@Suite("Configuration at start", .blocking)
struct ConfigStartupTests {
    private func start(config: String) throws -> (status: Int32, stderr: String, path: String) {
        let directory = try TemporaryDirectory("cfg")
        defer { directory.remove() }
        let path = directory.appending("bad.toml")
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try Tools.run([Binaries.path("stepsignd"), "--config", path, "--socket",
                                    directory.appending("s.sock"),
                                    "--state-dir", directory.appending("state")], timeout: 60)
        return (result.status, result.stderr, path)
    }

    @Test("a value of the wrong type names file, line and key, and the daemon exits 78")
    func wrongType() throws {
        let result = try start(config: "instance = \"x\"\n\n[password]\nmax_attempts = \"three\"\n")
        #expect(result.status == 78)
        #expect(result.stderr.contains("\(result.path):4"))
        #expect(result.stderr.contains("password.max_attempts"))
    }

    @Test("an unknown key is refused, not ignored")
    func unknownKey() throws {
        let result = try start(config: "[signing]\nallow_level_zero = true\n")
        #expect(result.status == 78)
        #expect(result.stderr.contains("\(result.path):2"))
        #expect(result.stderr.contains("signing.allow_level_zero"))
    }

    @Test("scrypt memory past what the hasher allows (512 MiB) exits 78 naming the key, instead of trapping")
    func scryptMemoryPastTheHashersLimit() throws {
        let result = try start(config: "[password]\nscrypt_n = 524288\nscrypt_r = 8\n")
        #expect(result.status == 78)
        #expect(result.stderr.contains("\(result.path):3"))
        #expect(result.stderr.contains("password.scrypt_r"))
        #expect(result.stderr.contains("256 MiB"))
    }

    @Test("a TOML syntax error names the line")
    func syntax() throws {
        let result = try start(config: "[server]\nsocket = \"/tmp/x.sock\n")
        #expect(result.status == 78)
        #expect(result.stderr.contains("\(result.path):2"))
    }

    @Test("a state directory whose parent is missing exits 78 naming the path and the reason in words")
    func stateDirectoryParentMissing() throws {
        let directory = try TemporaryDirectory("cfg")
        defer { directory.remove() }
        let config = directory.appending("stepsignd.toml")
        try DaemonHarness.writeConfig(DaemonHarness.config(""), to: config)
        let state = directory.appending("missing/state")
        let result = try Tools.run([Binaries.path("stepsignd"), "--config", config, "--socket", directory.appending("s.sock"),
                                    "--state-dir", state], timeout: 60)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains(state), "\(result.stderr)")
        #expect(result.stderr.contains("No such file or directory"), "\(result.stderr)")
        #expect(!result.stderr.contains("errno:") && !result.stderr.contains("Error: "), "\(result.stderr)")
    }

    @Test("a state directory that is a file exits 78 saying so")
    func stateDirectoryIsAFile() throws {
        let directory = try TemporaryDirectory("cfg")
        defer { directory.remove() }
        let config = directory.appending("stepsignd.toml")
        try DaemonHarness.writeConfig(DaemonHarness.config(""), to: config)
        let state = directory.appending("state")
        try "not a directory".write(toFile: state, atomically: true, encoding: .utf8)
        let result = try Tools.run([Binaries.path("stepsignd"), "--config", config, "--socket", directory.appending("s.sock"),
                                    "--state-dir", state], timeout: 60)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains(state), "\(result.stderr)")
        #expect(!result.stderr.contains("errno:") && !result.stderr.contains("Error: "), "\(result.stderr)")
    }

    @Test("a socket path longer than a Unix socket's exits 78 saying so, not with SwiftNIO's error")
    func socketPathTooLong() throws {
        let directory = try TemporaryDirectory("cfg")
        defer { directory.remove() }
        let config = directory.appending("stepsignd.toml")
        try DaemonHarness.writeConfig(DaemonHarness.config(""), to: config)
        let socket = directory.appending(String(repeating: "s", count: 120) + ".sock")
        let result = try Tools.run([Binaries.path("stepsignd"), "--config", config, "--socket", socket,
                                    "--state-dir", directory.appending("state")], timeout: 60)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("stepsignd: server.socket \(socket): cannot listen there: a Unix socket's path is at most 107 bytes long"),
                "\(result.stderr)")
        #expect(!result.stderr.contains("Error: "), "\(result.stderr)")
    }

    @Test("a state directory whose database is not one exits 78 naming the file")
    func databaseNotADatabase() throws {
        let directory = try TemporaryDirectory("cfg")
        defer { directory.remove() }
        let config = directory.appending("stepsignd.toml")
        try DaemonHarness.writeConfig(DaemonHarness.config(""), to: config)
        let state = directory.appending("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        let database = state + "/stepsign.sqlite"
        try Data(repeating: 0x5A, count: 4096).write(to: URL(fileURLWithPath: database))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: database)
        let result = try Tools.run([Binaries.path("stepsignd"), "--config", config, "--socket", directory.appending("s.sock"),
                                    "--state-dir", state], timeout: 60)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("stepsignd: cannot open the SQLite store \(database): "), "\(result.stderr)")
        #expect(!result.stderr.contains("Error: "), "\(result.stderr)")
    }

    @Test("a missing file is refused with its path")
    func missingFile() throws {
        let result = try Tools.run([Binaries.path("stepsignd"), "--config", "/nonexistent/stepsignd.toml"], timeout: 60)
        #expect(result.status == 78)
        #expect(result.stderr.contains("/nonexistent/stepsignd.toml"))
    }
}
