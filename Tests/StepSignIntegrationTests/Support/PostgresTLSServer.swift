import Foundation
import StepSignTestSupport
import Testing

/// A PostgreSQL server of its own for the TLS tests (`scripts/pg-test-server start-tls`):
/// TCP on 127.0.0.1 and 127.0.0.2 with `ssl = on`, a certificate from a throwaway CA for
/// localhost and 127.0.0.1, `hostssl` only with scram-sha-256 for the role `user`, whose
/// password is in `passwordFile`. The shared Unix-socket server of the other tests is left
/// alone. Stopped, and its directory removed, by `stop()`.
final class PostgresTLSServer: Sendable {
    let directory: String
    let socketDirectory: String
    let admin: String
    let port: Int
    let user: String
    let passwordFile: String
    let caFile: String

    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/pg-test-server").path

    struct StartFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs the script with `arguments` (a `Subprocess`: Foundation's `Process` sometimes
    /// misses a child's exit here, and the script leaves a server running behind it); returns
    /// its exit status and its output (stdout and stderr together).
    private static func runScript(_ arguments: [String]) throws -> (status: Int32?, output: String) {
        let directory = try TemporaryDirectory("tests").url
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("pg-test-server.log").path
        let process = try Subprocess(executable: "/bin/bash", arguments: [script] + arguments, logPath: log)
        let status = process.wait(timeout: 300)
        if status == nil { process.signal(SIGKILL); process.wait(timeout: 10) }
        return (status, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    /// Starts the server; throws with the script's output if it cannot.
    init() throws {
        let result = try Self.runScript(["start-tls"])
        var values: [String: String] = [:]
        for line in result.output.split(separator: "\n") where line.hasPrefix("export ") {
            let assignment = line.dropFirst("export ".count)
            guard let equals = assignment.firstIndex(of: "=") else { continue }
            values[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
                .trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        }
        guard result.status == 0, let directory = values["STEPSIGN_TEST_PG_TLS_DIR"] else {
            if let directory = values["STEPSIGN_TEST_PG_TLS_DIR"] { _ = try? Self.runScript(["stop", directory]) }
            throw StartFailure(description: "pg-test-server start-tls exited \(result.status.map(String.init) ?? "late"): \(result.output)")
        }
        self.directory = directory
        socketDirectory = values["STEPSIGN_TEST_PG_TLS_SOCKET_DIR"] ?? ""
        admin = values["STEPSIGN_TEST_PG_TLS_ADMIN"] ?? ""
        port = Int(values["STEPSIGN_TEST_PG_TLS_PORT"] ?? "") ?? 0
        user = values["STEPSIGN_TEST_PG_TLS_USER"] ?? ""
        passwordFile = values["STEPSIGN_TEST_PG_TLS_PASSWORD_FILE"] ?? ""
        caFile = values["STEPSIGN_TEST_PG_TLS_CA_FILE"] ?? ""
    }

    /// Stops the server and removes its directory (its data, keys and password file).
    func stop() {
        _ = try? Self.runScript(["stop", directory])
    }

    /// Runs `sql` as the superuser over the server's Unix socket; returns psql's unaligned,
    /// tuples-only output.
    @discardableResult
    func query(_ sql: String, database: String = "postgres") throws -> String {
        let result = try Tools.run([PostgresServer.psql, "-h", socketDirectory, "-p", "\(port)", "-U", admin, "-d", database,
                                    "-v", "ON_ERROR_STOP=1", "-q", "-A", "-t", "-c", sql])
        guard result.status == 0 else { throw PostgresServer.PSQLFailure(status: result.status, stderr: result.stderr) }
        return result.stdout
    }

    /// A fresh database owned by `user` (so the daemon can create its schema in it).
    func createDatabase() throws -> String {
        let name = "stepsign_tls_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try query("CREATE DATABASE \(name) OWNER \(user)")
        return name
    }

    /// The daemon's `[storage]` lines for `database` over TCP to `host` with `tls`.
    func config(database: String, host: String = "127.0.0.1", tls: String, caFile: String? = nil,
                passwordFile: String? = nil) -> String {
        var lines = """
            [storage]
            backend = "postgresql"
            \(TestSealKey.configLine)
            [storage.postgresql]
            host = "\(host)"
            port = \(port)
            database = "\(database)"
            user = "\(user)"
            password_file = "\(passwordFile ?? self.passwordFile)"
            tls = "\(tls)"
            pool_size = 2
            """
        if let caFile { lines += "\ntls_ca_file = \"\(caFile)\"" }
        return lines
    }
}

/// One TLS server for a whole suite, stopped after its last test (also when one fails).
struct TLSPostgresServer: SuiteTrait, TestScoping {
    @TaskLocal static var current: PostgresTLSServer?

    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        let server = try PostgresTLSServer()
        defer { server.stop() }
        try await Self.$current.withValue(server) { try await function() }
    }
}
