import Foundation
import Logging
import NIOConcurrencyHelpers
import StepSignEngine
import StepSignConfig
import StepSignStorage
import StepSignTestSupport

/// An engine on a real SQLite store and keyring in a fresh temp directory, with cheap scrypt
/// (`scrypt_n = 1024`) and whatever `configure` changes.
public func makeTestEngine(_ prefix: String, logger: Logger = TestLog.logger(),
                    configure: (inout StepSignConfiguration) -> Void = { _ in }) async throws
    -> (engine: Engine, directory: String)
{
    let directory = TemporaryDirectory.path(prefix)
    var config = StepSignConfiguration.default
    config.password.scryptN = 1024
    config.server.stateDir = directory
    // The engine admits each request under the access lists (SPEC §7): uid 0 is an admin by
    // default, the test peers 1000 and 1001 are clients.
    config.access.clientUIDs = [1000, 1001]
    // No timed checkpoint within a test's life: the engine outlives the test (nothing stops it),
    // and one due a minute later wrote into a directory the test had removed ("cannot make a
    // log checkpoint … No such file", in the log of a later test). A test that wants them sets it.
    config.ledger.checkpointSeconds = 86_400
    configure(&config)
    return (try await makeTestEngine(config, directory: directory, logger: logger), directory)
}

/// An engine with `config` on a real SQLite store and keyring in `directory` (created).
public func makeTestEngine(_ config: StepSignConfiguration, directory: String, logger: Logger = TestLog.logger())
    async throws -> Engine
{
    var config = config
    config.server.stateDir = directory
    let store = try SQLiteStore.open(stateDirectory: directory, seal: try SealKey.stateKey(stateDirectory: directory).seal, sealUnsealed: true)
    let keyring = try await Keyring.open(directory: directory + "/keys", passphrase: nil, store: store, logger: logger)
    return try Engine(configuration: config, store: store, keyring: keyring, logger: logger)
}

/// The password ``addTestUser(_:_:password:)`` gives by default: accepted by the default policy.
public let testUserPassword = "Tr1cky-Pelican-42"

/// Adds `user` through `admin.addUser`, as an admin peer would; the reply's error is thrown.
public func addTestUser(_ engine: Engine, _ user: String = "alice", password: String = testUserPassword) async throws {
    var admin = Session(peer: testAdminPeer)
    let reply = await engine.handle(line: Array(#"{"id":1,"op":"admin.addUser","user":"\#(user)","password":"\#(password)"}"#.utf8),
                                    session: &admin)
    if let error = reply.error { throw error }
}

/// A peer the test engine admits as an admin (uid 0, `access.admin_uids`' default).
public let testAdminPeer = Peer(uid: 0, gid: 0, pid: 1, comm: "admin", groups: [])

/// The lines a logger wrote, kept in memory for a test to read.
public final class CapturedLog: Sendable {
    public struct Line: Sendable {
        public let level: Logger.Level
        public let message: String
        public let metadata: [String: String]
    }

    public init() {}

    private let box = NIOLockedValueBox<[Line]>([])

    public var lines: [Line] { box.withLockedValue { $0 } }

    public func lines(_ message: String) -> [Line] { lines.filter { $0.message == message } }

    /// A logger at `level` that writes here.
    public func logger(level: Logger.Level = .debug) -> Logger {
        var logger = Logger(label: "test") { _ in Handler(log: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func append(_ line: Line) { box.withLockedValue { $0.append(line) } }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var logLevel: Logger.Level = .debug
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            log.append(Line(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
        }
    }
}
