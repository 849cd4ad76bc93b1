import Foundation
import StepSignTestSupport
import Testing

/// One daemon per state directory (issue 39), as PostgreSQL's `postmaster.pid`: a second
/// `stepsignd` on a state directory that a running one holds exits 78 naming the holder's pid,
/// before it touches the socket or the store; the lock goes with the process, so a daemon
/// killed with SIGKILL does not block the next start.
@Suite("One daemon per state directory", .blocking)
struct StateDirectoryLockTests {
    /// Starts a second daemon on `first`'s configuration and state directory with `socket`,
    /// and returns its exit status and stderr; a daemon still running after 30 s is killed
    /// and reported as status nil.
    private func second(of first: DaemonHarness, socket: String) throws -> (status: Int32?, stderr: String) {
        let log = first.directory.appendingPathComponent("second.log").path
        let process = try Subprocess(executable: Binaries.path("stepsignd"),
                                     arguments: ["--config", first.configPath, "--socket", socket,
                                                 "--state-dir", first.stateDirectory],
                                     logPath: log)
        let status = process.wait(timeout: 30)
        if status == nil {
            process.signal(SIGTERM)
            process.wait(timeout: 30)
        }
        return (status, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    @Test("a second daemon on the same state directory and socket exits 78 naming the first's pid; the first keeps serving on its socket")
    func sameSocket() throws {
        let first = try DaemonHarness()
        let pid = try #require(first.process?.pid)
        let result = try second(of: first, socket: first.socketPath)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("pid \(pid)"), "\(result.stderr)")
        #expect(result.stderr.contains(first.stateDirectory), "\(result.stderr)")
        // The socket is still the first daemon's: it was neither replaced nor removed.
        #expect(FileManager.default.fileExists(atPath: first.socketPath))
        #expect(try first.connect().call("status").code == 0)
    }

    @Test("a second daemon on the same state directory with another socket exits 78 and creates no socket")
    func otherSocket() throws {
        let first = try DaemonHarness()
        let pid = try #require(first.process?.pid)
        let other = first.directory.appendingPathComponent("other.sock").path
        let result = try second(of: first, socket: other)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("pid \(pid)"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: other))
        #expect(try first.connect().call("status").code == 0)
    }

    @Test("a daemon killed with SIGKILL leaves no lock behind: the next start on its state directory serves")
    func killedDaemonDoesNotBlock() throws {
        let daemon = try DaemonHarness()
        #expect(daemon.stop(signal: SIGKILL) == 128 + SIGKILL)
        try daemon.start()
        #expect(try daemon.connect().call("status").code == 0)
        // And the restarted daemon holds the directory in turn.
        let pid = try #require(daemon.process?.pid)
        let result = try second(of: daemon, socket: daemon.directory.appendingPathComponent("third.sock").path)
        #expect(result.status == 78 && result.stderr.contains("pid \(pid)"), "\(result.stderr)")
    }
}
