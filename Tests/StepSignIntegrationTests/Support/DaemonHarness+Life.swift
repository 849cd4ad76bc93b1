import Foundation
import StepSignClient
import StepSignTestSupport

/// Signals, reloads and the log, for the tests of the daemon's life (SPEC §7).
extension DaemonHarness {
    /// The daemon's process ID, if it runs.
    var pid: Int32? {
        guard let process, process.isRunning else { return nil }
        return process.pid
    }

    /// What a SIGHUP did.
    enum ReloadOutcome: Equatable {
        case reloaded
        case keptOld
    }

    /// Rewrites the config with `extra` (as `DaemonHarness(config:)` takes it), sends SIGHUP
    /// and waits until the daemon logs whether it put the file in force.
    func reload(config extra: String) throws -> ReloadOutcome {
        try reload(writing: Self.config(extra))
    }

    /// Writes `text` as the config file as it is, sends SIGHUP and waits for the outcome.
    func reload(writing text: String) throws -> ReloadOutcome {
        try Self.writeConfig(text, to: configPath)
        return try reloadAsIs()
    }

    /// Sends SIGHUP without touching the config file and waits for the outcome.
    func reloadAsIs() throws -> ReloadOutcome {
        let before = (count(in: log, "msg=\"configuration reloaded\""), count(in: log, "msg=\"configuration not reloaded"))
        guard let process, process.isRunning else { throw HarnessError.notReady(log: log) }
        process.signal(SIGHUP)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let text = log
            if count(in: text, "msg=\"configuration reloaded\"") > before.0 { return .reloaded }
            if count(in: text, "msg=\"configuration not reloaded") > before.1 { return .keptOld }
            usleep(20_000)
        }
        throw HarnessError.notReady(log: log)
    }

    /// The log lines whose message is `message`.
    func logLines(message: String) -> [String] {
        let quoted = message.contains(" ") ? "msg=\"\(message)\"" : "msg=\(message)"
        return log.split(separator: "\n").map(String.init).filter { $0.contains(" \(quoted) ") || $0.hasSuffix(" \(quoted)") }
    }

    /// Sends `signal` and waits up to `timeout` seconds; the exit status, or nil if it still runs.
    func stop(signal: Int32, within timeout: Double) -> Int32? {
        guard let process else { return nil }
        process.signal(signal)
        return process.wait(timeout: timeout)
    }

    private func count(in text: String, _ needle: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }
}

/// One logfmt line's fields (`key=value`, values possibly quoted), for the audit-line tests.
func logfmtFields(_ line: String) -> [String: String] {
    var fields: [String: String] = [:]
    var index = line.startIndex
    while index < line.endIndex {
        while index < line.endIndex, line[index] == " " { index = line.index(after: index) }
        guard let equals = line[index...].firstIndex(of: "=") else { break }
        let key = String(line[index..<equals])
        index = line.index(after: equals)
        var value = ""
        if index < line.endIndex, line[index] == "\"" {
            index = line.index(after: index)
            while index < line.endIndex, line[index] != "\"" {
                if line[index] == "\\", line.index(after: index) < line.endIndex { index = line.index(after: index) }
                value.append(line[index])
                index = line.index(after: index)
            }
            if index < line.endIndex { index = line.index(after: index) }
        } else {
            while index < line.endIndex, line[index] != " " {
                value.append(line[index])
                index = line.index(after: index)
            }
        }
        fields[key] = value
    }
    return fields
}

/// A client running as another user: `setpriv` runs the system's python3 (not a per-user
/// shim under /root) with a small line-protocol client.
///
/// It sends each request, prints each reply line, and then prints `CLOSED` if the daemon
/// closed the connection, or `OPEN` if the connection was still open a second later. With no
/// requests it only reads one line.
enum PeerClient {
    /// The interpreter every user may run.
    static let python = "/usr/bin/python3"

    private static let script = #"""
        import socket, sys
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(sys.argv[1])
        f = s.makefile("rb")
        def line():
            try:
                data = f.readline()
            except (ConnectionResetError, socket.timeout):
                return None
            return data.decode().rstrip("\n") if data else None
        requests = sys.argv[2:]
        if not requests:
            print(line() or "CLOSED")
        for request in requests:
            try:
                s.sendall(request.encode() + b"\n")
            except (BrokenPipeError, ConnectionResetError):
                print("CLOSED"); sys.exit(0)
            reply = line()
            if reply is None:
                print("CLOSED"); sys.exit(0)
            print(reply)
        s.settimeout(1)
        try:
            print("CLOSED" if not f.readline() else "MORE")
        except socket.timeout:
            print("OPEN")
        except ConnectionResetError:
            print("CLOSED")
        """#

    /// What the client saw: the reply lines, and whether the connection ended closed.
    struct Transcript {
        var replies: [ClientReply]
        var closed: Bool
        var raw: String
    }

    /// Runs the client as `uid`/`gid` with supplementary `groups` (none if empty).
    static func run(socket: String, uid: UInt32 = 65534, gid: UInt32 = 65534, groups: [UInt32] = [],
                    requests: [String]) throws -> Transcript {
        let groupOption = groups.isEmpty ? "--clear-groups" : "--groups=" + groups.map(String.init).joined(separator: ",")
        let result = try Tools.run(["setpriv", "--reuid=\(uid)", "--regid=\(gid)", groupOption,
                                    python, "-c", script, socket] + requests)
        guard result.status == 0 else { throw PeerClientFailure(status: result.status, stderr: result.stderr) }
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let replies = try lines.filter { $0.hasPrefix("{") }.map { try ClientReply(line: Array($0.utf8)) }
        return Transcript(replies: replies, closed: lines.last == "CLOSED", raw: result.stdout)
    }

    /// Whether the tests can run a client as another user: root, with setpriv and python3.
    static var available: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: python)
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
    }
}

/// The client as another user did not run to the end.
struct PeerClientFailure: Error, CustomStringConvertible {
    var status: Int32
    var stderr: String
    var description: String { "the peer client exited with \(status): \(stderr)" }
}
