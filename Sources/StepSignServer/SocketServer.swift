#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import StepSignEngine
import struct Foundation.Date
import typealias Foundation.TimeInterval

/// The Unix-socket front of the daemon: the line protocol of SPEC §3 over a stream socket.
///
/// Each connection is a session; its requests run one after another, so replies come in
/// request order however many a client pipelines. Connections run concurrently. On graceful
/// shutdown the listener closes, each connection stops reading, finishes the request it is
/// on and closes.
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

    private let engine: Engine
    private let listener: Listener
    private let logger: Logger
    private let onListening: @Sendable () -> Void

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
                        group.addTask { await self.serve(connection) }
                    }
                }
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)
        }
        if case let .path(path, _, _) = listener { unlink(path) }
        logger.notice("stopped listening")
    }

    private typealias Connection = NIOAsyncChannel<Frame, ByteBuffer>

    private func bind() async throws -> NIOAsyncChannel<(Connection, Peer?), Never> {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
        let initializer: @Sendable (Channel) -> EventLoopFuture<(Connection, Peer?)> = { channel in
            PeerCredentials.read(channel).map { Optional($0) }.recover { _ in nil }.flatMapThrowing { peer in
                try channel.pipeline.syncOperations.addHandler(
                    ByteToMessageHandler(LineFrameDecoder(maxLength: Self.maxLineLength))
                )
                return (try Connection(wrappingChannelSynchronously: channel), peer)
            }
        }
        switch listener {
        case let .path(path, _, _):
            return try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true,
                                            childChannelInitializer: initializer)
        case let .inherited(descriptor):
            return try await bootstrap.bind(descriptor, childChannelInitializer: initializer)
        }
    }

    private func serve(_ accepted: (Connection, Peer?)) async {
        let (connection, peer) = accepted
        do {
            try await connection.executeThenClose { inbound, outbound in
                guard let peer else {
                    try await outbound.write(Self.buffer(Reply(id: .null, error: StepSignError(.permissionDenied, "peer credentials unavailable"))))
                    return
                }
                let decision = engine.admit(peer)
                guard decision != .refused else {
                    logger.warning("refused peer", metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)", "comm": "\(peer.comm)"])
                    try await outbound.write(Self.buffer(Reply(id: .null, error: StepSignError(.permissionDenied, "this peer may not use stepsignd"))))
                    return
                }
                var session = Session(peer: peer, isAdmin: decision == .admin)
                try await withGracefulShutdownHandler {
                    for try await frame in inbound {
                        let reply = await handle(frame, session: &session)
                        try await outbound.write(Self.buffer(reply))
                        if reply.closesConnection { return }
                    }
                } onGracefulShutdown: {
                    connection.channel.close(mode: .input, promise: nil)
                }
            }
        } catch {
            logger.debug("connection ended", metadata: ["error": "\(error)"])
        }
    }

    private func handle(_ frame: Frame, session: inout Session) async -> Reply {
        switch frame {
        case .tooLong:
            return Reply(id: .null, error: StepSignError(.invalidArguments, "request line longer than \(Self.maxLineLength) bytes"),
                         closesConnection: true)
        case let .line(buffer):
            let now = Date()
            let idle = TimeInterval(engine.config.server.idleTimeoutSeconds)
            if idle > 0, now.timeIntervalSince(session.lastActivity) > idle {
                session.end()
                session.lastActivity = now
                let id = (try? JSONParser.parse(buffer.readableBytesView))?["id"] ?? .null
                return Reply(id: id, error: StepSignError(.sessionExpired, "the session was idle too long and has ended"))
            }
            session.lastActivity = now
            return await engine.handle(line: buffer.readableBytesView, session: &session, now: now)
        }
    }

    private static func buffer(_ reply: Reply) -> ByteBuffer {
        ByteBuffer(bytes: reply.line)
    }

    private static func setPermissions(path: String, mode: UInt16, group: String) throws {
        if !group.isEmpty {
            guard let gid = groupID(group) else { throw ServerError.unknownGroup(group) }
            guard chown(path, uid_t.max, gid) == 0 else { throw ServerError.system("chown", path, errno) }
        }
        guard chmod(path, mode_t(mode)) == 0 else { throw ServerError.system("chmod", path, errno) }
    }

    private static func groupID(_ name: String) -> gid_t? {
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var scratch = [CChar](repeating: 0, count: 4096)
        guard getgrnam_r(name, &entry, &scratch, scratch.count, &result) == 0, result != nil else { return gid_t(name) }
        return entry.gr_gid
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
    case unknownGroup(String)
    case system(String, String, Int32)

    public var description: String {
        switch self {
        case let .unknownGroup(name): "server.socket_group: no group named \"\(name)\""
        case let .system(call, path, code): "\(call) \(path): \(String(cString: strerror(code)))"
        }
    }
}
