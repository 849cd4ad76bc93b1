#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StepSignClient
import StepSignConfig
import StepSignEngine
import StepSignEngineTestSupport
import StepSignProtocol
import StepSignTestSupport

/// Where a scenario runs, in the style of hummingbird's `.router` and `.live` test clients:
/// in-process against the engine, on an injected clock, or against the real `stepsignd` over its
/// real socket. Both are given the same configuration text and the same request lines, and both
/// answers are read back from the reply line's bytes by the one typed client's `ClientReply`, so
/// one scenario checks both.
enum ScenarioPlace: String, CaseIterable, Sendable, CustomStringConvertible {
    case inProcess = "in-process engine"
    case live = "real daemon"

    var description: String { rawValue }
}

/// The daemon or engine a scenario talks to, with the harness's configuration plus `extra`.
final class ScenarioHost: @unchecked Sendable {
    let place: ScenarioPlace
    private let daemon: DaemonHarness?
    private let engine: Engine?
    private let directory: String?
    /// The in-process engine's clock; the real daemon's is the wall clock.
    private(set) var now: Date

    init(_ place: ScenarioPlace, config extra: String = "") async throws {
        self.place = place
        now = Date()
        switch place {
        case .live:
            daemon = try DaemonHarness(config: extra)
            engine = nil
            directory = nil
        case .inProcess:
            let text = DaemonHarness.config(extra)
            let directory = TemporaryDirectory.path("scenario")
            engine = try await makeTestEngine(StepSignConfiguration.parse(text, file: "scenario.toml"), directory: directory)
            self.directory = directory
            daemon = nil
        }
    }

    deinit {
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// A new connection (a new session) of this test process's uid.
    func connect() throws -> ScenarioConnection {
        if let daemon { return ScenarioConnection(host: self, raw: try RawClient(socketPath: daemon.socketPath)) }
        let peer = Peer(uid: getuid(), gid: getgid(), pid: getpid(), comm: "scenario", groups: [])
        return ScenarioConnection(host: self, engine: engine!, session: Session(peer: peer))
    }

    /// A host with the harness's user (`alice`, ``DaemonHarness/password``) added.
    static func withUser(_ place: ScenarioPlace, config: String = "") async throws -> ScenarioHost {
        let host = try await ScenarioHost(place, config: config)
        let added = try await host.connect().call("admin.addUser", [
            "user": .string(DaemonHarness.user), "password": .string(DaemonHarness.password),
        ])
        guard added.code == 0 else { throw HarnessError.refused(added.code, added.message) }
        return host
    }

    /// Moves the in-process clock on; a scenario that needs it runs in-process only.
    func advance(seconds: Double) {
        precondition(place == .inProcess, "the real daemon runs on the wall clock")
        now += seconds
    }
}

/// One session: request lines out, reply lines back, through the socket or the engine.
final class ScenarioConnection: @unchecked Sendable {
    private let raw: RawClient?
    /// Kept alive by its connections: the engine and its directory are the host's.
    private let host: ScenarioHost?
    private let engine: Engine?
    private var session: Session?
    private var nextID = 1

    fileprivate init(host: ScenarioHost, raw: RawClient) {
        self.raw = raw
        self.host = host
        engine = nil
    }

    fileprivate init(host: ScenarioHost, engine: Engine, session: Session) {
        raw = nil
        self.host = host
        self.engine = engine
        self.session = session
    }

    /// Sends `op` with `parameters` (in order) and returns its reply.
    func call(_ op: String, _ parameters: KeyValuePairs<String, JSONValue> = [:]) async throws -> ClientReply {
        let members: [(String, JSONValue)] = [("id", .int(Int64(nextID))), ("op", .string(op))] + parameters.map { ($0.key, $0.value) }
        nextID += 1
        return try await exchange(JSONValue.object(members).jsonBytes, op: op)
    }

    /// Sends `line` as it is (without its newline), well-formed or not, and returns the reply.
    func exchange(_ line: String) async throws -> ClientReply {
        try await exchange(Array(line.utf8), op: "a raw line")
    }

    private func exchange(_ line: [UInt8], op: String) async throws -> ClientReply {
        let replyLine: [UInt8]
        if let raw {
            try raw.send(line + [0x0A])
            guard case let .line(bytes) = raw.next() else { throw ScenarioError.noReply(op) }
            replyLine = bytes
        } else {
            var session = session!
            let reply = await engine!.handle(line: line, session: &session, now: host!.now)
            self.session = session
            replyLine = Array(reply.line.dropLast())
        }
        return try ClientReply(line: replyLine)
    }
}

extension ScenarioConnection {
    /// `setUser` then `setPassword` mode 0 for the harness's user; requires `onUserLoggedIn`.
    func requireLogin(password: String = DaemonHarness.password) async throws {
        _ = try await call("setUser", ["user": .string(DaemonHarness.user)])
        let reply = try await call("setPassword", ["password": .string(password), "challengeMode": 0])
        guard reply.eventNames == ["onUserLoggedIn"] else { throw HarnessError.refused(reply.code, reply.message) }
    }
}

enum ScenarioError: Error {
    case noReply(String)
}
