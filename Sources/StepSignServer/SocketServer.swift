#if canImport(Glibc)
import Glibc
import StepSignProtocol
#endif
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ServiceLifecycle
import StepSignNIO
import StepSignEngine
import StepSignMetrics
import Synchronization
import struct Foundation.Date

/// The Unix-socket front of the daemon: the line protocol of SPEC §3 over a stream socket.
///
/// Each connection is a session; its requests run one after another, so replies come in
/// request order however many a client pipelines. A connection's task prefers its channel's
/// event loop as executor, so a request is read, handled and answered on one thread; the
/// engine sends blocking work (scrypt, key files, child processes) to `NIOThreadPool` and
/// ledger commits to the ledger writer's thread. Connections run concurrently; one past
/// `server.max_connections`, or past `server.max_connections_per_uid` connections of its peer
/// uid, gets one reply with error 14 and is closed. A connection idle for
/// `server.idle_timeout_seconds` (no request read and unanswered) gets one reply with error 5
/// and is closed (`IdleConnectionHandler`). A connection closes only once every reply written
/// has gone to the socket (`repliesWrittenOut`): a client that ends its input, or reads slowly
/// when shutdown ends the connection, still gets each reply of a request done. On graceful shutdown
/// the listener closes, each connection stops reading, finishes the requests it has read and
/// closes. After `shutdownGrace` a connection starts no more of the requests it has read (they
/// get no reply and nothing is done: as if never sent), answers the one in flight and closes;
/// one whose reply still cannot go out `shutdownWriteGrace` later (a client that stopped
/// reading its replies) is closed outright, so shutdown is bounded and a request is either
/// answered or not done.
public final class SocketServer: Service, Sendable {
    /// Where to listen.
    public enum Listener: Sendable {
        /// Create the socket at `path` with `mode` and, if not empty, `group`.
        case path(String, mode: UInt16, group: String)
        /// A socket already bound and listening, passed by systemd (`LISTEN_FDS`).
        case inherited(descriptor: Int32)
    }

    /// The longest request line, in bytes (SPEC §3).
    public static let maxLineLength = 64 * 1024

    /// How long, after shutdown begins, a connection may take to finish the requests it has
    /// read before it is closed outright.
    public static let shutdownGrace: TimeAmount = .seconds(5)

    /// How long after `shutdownGrace` a connection may take to answer the request it was
    /// handling before it is closed outright, even if that reply is lost.
    public static let shutdownWriteGrace: TimeAmount = .seconds(3)

    private let engine: Engine
    private let listener: Listener
    private let logger: Logger
    private let onListening: @Sendable () -> Void
    /// Connections accepted and not yet closed.
    private let openConnections = Atomic<Int>(0)
    /// Admitted connections not yet closed, per peer uid (no entry: none).
    private let connectionsPerUID = NIOLockedValueBox<[UInt32: Int]>([:])
    /// `stepsign_connections`: admitted connections waiting for a request, and with one in work.
    private let idleConnections = StepSignMetric.connections.openCount([("state", "idle")])
    private let workingConnections = StepSignMetric.connections.openCount([("state", "working")])

    /// - Parameter onListening: called once the socket accepts connections (readiness).
    public init(engine: Engine, listener: Listener, logger: Logger, onListening: @escaping @Sendable () -> Void = {}) {
        self.engine = engine
        self.listener = listener
        self.logger = logger
        self.onListening = onListening
    }

    public func run() async throws {
        let server = try await bind()
        if case let .path(path, mode, group) = listener {
            try Self.setPermissions(path: path, mode: mode, group: group)
        }
        logger.notice("listening", metadata: ["socket": "\(describe(listener))"])
        onListening()
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { connections in
                    for try await connection in connections {
                        let open = openConnections.wrappingAdd(1, ordering: .relaxed).newValue
                        let executor = EventLoopTaskExecutor(connection.0.channel.eventLoop)
                        group.addTask(executorPreference: executor) {
                            defer { self.openConnections.wrappingSubtract(1, ordering: .relaxed) }
                            await self.serve(connection, open: open)
                        }
                    }
                }
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)
            self.engine.endWaits()
        }
        if case let .path(path, _, _) = listener { unlink(path) }
        logger.notice("stopped listening")
    }

    private typealias Connection = StreamConnection<Frame>

    private func bind() async throws -> NIOAsyncChannel<(Connection, Peer?), Never> {
        let engine = self.engine
        return try await listener.bind(role: "server.socket") { channel in
            try channel.pipeline.syncOperations.addHandlers(
                LineFrameHandler(maxLength: Self.maxLineLength),
                IdleConnectionHandler(timeout: { .seconds(Int64(engine.idleTimeoutSeconds)) })
            )
        }
    }

    /// Serves one connection; `open` counts the connections open with it.
    private func serve(_ accepted: (Connection, Peer?), open: Int) async {
        let (connection, peer) = accepted
        do {
            try await connection.executeThenClose { _ in
                let limit = engine.maxConnections
                guard open <= limit else {
                    logger.warning("connection refused: too many connections", metadata: ["max": "\(limit)"])
                    try await connection.write(Reply(id: .null, error: StepSignError(.busy, "too many connections (server.max_connections); try again later")).buffer())
                    return
                }
                guard let peer else {
                    try await connection.write(Reply(id: .null, error: StepSignError(.permissionDenied, "peer credentials unavailable")).buffer())
                    return
                }
                let decision = engine.admit(peer)
                guard decision != .refused else {
                    logger.warning("refused peer", metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)", "comm": "\(peer.comm)"])
                    try await connection.write(Reply(id: .null, error: StepSignError(.permissionDenied, "this peer may not use stepsignd")).buffer())
                    return
                }
                let perUID = engine.config.server.maxConnectionsPerUID
                guard claimSlot(uid: peer.uid, limit: perUID) else {
                    logger.warning("connection refused: too many connections of one uid",
                                   metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)", "max": "\(perUID)"])
                    try await connection.write(Reply(id: .null, error: StepSignError(.busy, "too many connections of this uid (server.max_connections_per_uid); try again later")).buffer())
                    return
                }
                defer { releaseSlot(uid: peer.uid) }
                idleConnections.increment()
                defer { idleConnections.decrement() }
                var session = Session(peer: peer)
                // The connection's reply bytes and buffer, reused for every reply (see
                // `Reply.write(into:scratch:)`).
                var replyBytes: [UInt8] = []
                replyBytes.reserveCapacity(2048)
                var replyBuffer = connection.channel.allocator.buffer(capacity: 2048)
                // Set when the grace is over: the requests read and not yet started are not.
                let graceOver = Atomic<Bool>(false)
                // An idempotencyKey claimed by a signing challenge still open is given up when
                // the connection ends, however it ends.
                do {
                    try await withGracefulShutdownHandler {
                        while let frame = try await connection.next() {
                            if graceOver.load(ordering: .acquiring) { return }
                            idleConnections.decrement()
                            workingConnections.increment()
                            let reply = await handle(frame, session: &session)
                            workingConnections.decrement()
                            idleConnections.increment()
                            reply.write(into: &replyBuffer, scratch: &replyBytes)
                            try await connection.write(replyBuffer)
                            if reply.closesConnection { return }
                        }
                    } onGracefulShutdown: {
                        let channel = connection.channel
                        channel.close(mode: .input, promise: nil)
                        channel.eventLoop.scheduleTask(in: Self.shutdownGrace) { graceOver.store(true, ordering: .releasing) }
                        channel.eventLoop.scheduleTask(in: Self.shutdownGrace + Self.shutdownWriteGrace) { channel.close(promise: nil) }
                    }
                } catch {
                    await engine.sessionClosed(session)
                    throw error
                }
                await engine.sessionClosed(session)
                await connection.channel.repliesWrittenOut()
            }
        } catch {
            logger.debug("connection ended", metadata: ["error": "\(error)"])
        }
    }

    private nonisolated(nonsending) func handle(_ frame: Frame, session: inout Session) async -> Reply {
        switch frame {
        case .tooLong:
            return Reply(id: .null, error: StepSignError(.invalidArguments, "request line longer than \(Self.maxLineLength) bytes"),
                         closesConnection: true)
        case let .line(buffer):
            // The engine admits each request under the access lists in force. Idleness is the
            // IdleConnectionHandler's: a connection idle past the timeout is closed before it
            // can send another request.
            return await engine.handle(line: buffer.readableBytesView, session: &session, now: Date())
        }
    }

    /// Takes one of `uid`'s `limit` connection slots; false if all are taken.
    private func claimSlot(uid: UInt32, limit: Int) -> Bool {
        connectionsPerUID.withLockedValue { counts in
            let open = counts[uid, default: 0]
            guard open < limit else { return false }
            counts[uid] = open + 1
            return true
        }
    }

    /// Gives back a slot `claimSlot(uid:limit:)` took.
    private func releaseSlot(uid: UInt32) {
        connectionsPerUID.withLockedValue { counts in
            let open = counts[uid, default: 1] - 1
            counts[uid] = open > 0 ? open : nil
        }
    }

    /// Checks the socket just bound at `path` and gives it `group`, without following a link
    /// (``SocketFileOwnership``); its mode was set at creation.
    /// Gives the socket just bound at `path` its `group` (a name; "" for none) after checking
    /// it is ours with `mode` (``SocketFileOwnership/secure(path:mode:group:owner:)``).
    public static func setPermissions(path: String, mode: UInt16, group: String) throws {
        var gid: gid_t?
        if !group.isEmpty {
            guard let named = AccessPolicy.gid(named: group) else { throw ServerError.unknownGroup(group) }
            gid = named
        }
        try SocketFileOwnership.secure(path: path, mode: mode, group: gid)
    }

    private func describe(_ listener: Listener) -> String {
        switch listener {
        case let .path(path, _, _): path
        case let .inherited(descriptor): "inherited fd \(descriptor)"
        }
    }
}

/// Why the server could not start.
public enum ServerError: Error, CustomStringConvertible {
    /// `server.socket_group` names no group.
    case unknownGroup(String)
    /// A system call (first) on a path (second) failed with an errno (third).
    case system(String, String, Int32)
    /// What is at the socket's path (first) is not the socket the daemon bound, as the second
    /// says (``SocketFileOwnership``).
    case socketFile(String, String)
    /// A socket named by the key (first) at an address (second: a path, or host:port) could
    /// not be made, as the third says in words.
    case cannotListen(String, String, String)

    public var description: String {
        switch self {
        case let .unknownGroup(name): "server.socket_group: no group named \"\(name)\""
        case let .system(call, path, code): "\(call) \(path): \(String(cString: strerror(code)))"
        case let .socketFile(path, problem): "server.socket \(path) \(problem); refusing to start"
        case let .cannotListen(role, path, problem): "\(role) \(path): cannot listen there: \(problem)"
        }
    }

    /// SwiftNIO's error from binding a socket at `address` (a path or host:port, the value of
    /// the key `role`) in words (issue 39: a start that printed `Error:
    /// unixDomainSocketPathTooLong` and exited 1); any other error as it is.
    public static func binding(_ error: any Error, address: String, role: String) -> any Error {
        switch error {
        case let error as IOError:
            return ServerError.cannotListen(role, address, String(cString: strerror(error.errnoCode)))
        case SocketAddressError.unixDomainSocketPathTooLong:
            return ServerError.cannotListen(role, address, "a Unix socket's path is at most 107 bytes long")
        case is UnixDomainSocketPathWrongType:
            return ServerError.cannotListen(role, address, "something other than a socket is there")
        default:
            return error
        }
    }
}
