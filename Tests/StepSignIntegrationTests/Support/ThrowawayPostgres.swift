#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StepSignTestSupport

/// A PostgreSQL server of one test's own, made by `scripts/pg-test-server start` (PostgreSQL
/// 15, `initdb` as nobody in a temporary directory, Unix socket only), for the fault tests
/// that stop the server or change its settings: the shared test server (``PostgresServer``)
/// must stay up for the tests that run beside them. Removed by ``stop()`` or when released.
final class ThrowawayPostgres: @unchecked Sendable {
    /// The directory `pg-test-server` made (data, socket, logs).
    let directory: String
    let socketDirectory: String
    let user: String
    let maintenanceDatabase: String
    private var stopped = false

    static let script: String = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/", !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            url.deleteLastPathComponent()
        }
        return url.appendingPathComponent("scripts/pg-test-server").path
    }()

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `pg-test-server` with `arguments` and returns its output (stdout and stderr).
    ///
    /// Through ``Subprocess`` (posix_spawn, reaped by its own `waitpid`), not `Tools.run`:
    /// Foundation's `Process.waitUntilExit` was seen to hang on the script that leaves a
    /// server running behind it, its exit never noticed.
    private static func runScript(_ arguments: [String]) throws -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("stepsign-pg-script-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let process = try Subprocess(executable: "/bin/bash", arguments: [script] + arguments, logPath: output)
        guard let status = process.wait(timeout: 180) else {
            process.signal(SIGKILL)
            _ = process.wait(timeout: 10)
            throw Failure(description: "pg-test-server \(arguments.joined(separator: " ")) did not finish")
        }
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard status == 0 else { throw Failure(description: "pg-test-server \(arguments.joined(separator: " ")): \(status) \(text)") }
        return text
    }

    /// Starts a new server (a second or two).
    init() throws {
        let output = try Self.runScript(["start"])
        var values: [String: String] = [:]
        for line in output.split(separator: "\n") where line.hasPrefix("export ") {
            let assignment = line.dropFirst("export ".count)
            guard let equals = assignment.firstIndex(of: "=") else { continue }
            values[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
                .trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        }
        guard let directory = values["STEPSIGN_TEST_PG_DIR"], let socket = values["STEPSIGN_TEST_PG_SOCKET_DIR"] else {
            throw Failure(description: "pg-test-server start printed no server: \(output)")
        }
        self.directory = directory
        socketDirectory = socket
        user = values["STEPSIGN_TEST_PG_USER"] ?? "stepsign_admin"
        maintenanceDatabase = values["STEPSIGN_TEST_PG_DATABASE"] ?? "postgres"
    }

    /// Stops the server (`pg_ctl stop -m mode`: "fast" ends every session with an error,
    /// "immediate" is a crash), keeping its data and socket directory.
    func halt(_ mode: String = "immediate") throws {
        _ = try Self.runScript(["halt", directory, mode])
    }

    /// Starts a halted server again on the same socket directory (after crash recovery, if halted immediately).
    func resume() throws {
        _ = try Self.runScript(["resume", directory])
    }

    /// Stops the server and removes its directory; safe to call twice.
    func stop() {
        guard !stopped else { return }
        stopped = true
        _ = try? Self.runScript(["stop", directory])
    }

    deinit { stop() }

    /// Runs `sql` as the superuser (in `database`, else the maintenance database) and returns
    /// psql's unaligned, tuples-only output.
    @discardableResult
    func administer(_ sql: String, database: String? = nil) throws -> String {
        let result = try Tools.run([PostgresServer.psql, "-h", socketDirectory, "-U", user, "-d", database ?? maintenanceDatabase,
                                    "-v", "ON_ERROR_STOP=1", "-q", "-tA", "-c", sql])
        guard result.status == 0 else { throw PostgresServer.PSQLFailure(status: result.status, stderr: result.stderr) }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A new empty database's name.
    func createDatabase() throws -> String {
        let name = "stepsign_f_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try administer("CREATE DATABASE \(name)")
        return name
    }

    /// The daemon's config lines for `database` on this server, as `instance` (first, before
    /// any table, as `DaemonHarness(config:)` takes top-level keys).
    func config(database: String, instance: String) -> String {
        """
        instance = "\(instance)"
        [storage]
        backend = "postgresql"
        \(TestSealKey.configLine)
        [storage.postgresql]
        host = "\(socketDirectory)"
        database = "\(database)"
        user = "\(user)"
        pool_size = 4
        """
    }
}
