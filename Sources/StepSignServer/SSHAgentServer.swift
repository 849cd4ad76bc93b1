#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ServiceLifecycle
import StepSignEngine
import StepSignFormat
import StepSignNIO
import Synchronization
import struct Foundation.Date

/// The SSH agent socket (SPEC §3.5): the ssh-agent protocol (draft-miller-ssh-agent, as
/// OpenSSH's `ssh-agent` speaks it) on `[ssh_agent] socket`, for `ssh-add -L`,
/// `ssh-keygen -Y sign` and git.
///
/// `SSH_AGENTC_REQUEST_IDENTITIES` lists the active signing key; `SSH_AGENTC_SIGN_REQUEST`
/// goes to ``Engine/sshAgentSign(keyBlob:data:peer:now:)``, which signs only SSHSIG data of a
/// configured namespace for a peer uid with an open unlock window; every other request
/// (adding or removing keys, locking, extensions) gets `SSH_AGENT_FAILURE`, as OpenSSH's
/// agent answers what it does not support. Bounded as the main socket is: the peer must pass
/// the access lists (`Engine.admit`), a message is at most 64 KiB (longer, or empty: the
/// connection is closed), `server.max_connections` and `server.max_connections_per_uid` (this
/// socket's own count) hold, and a connection that sends nothing for
/// `server.idle_timeout_seconds` is closed. Requests of one connection are answered in order.
public final class SSHAgentServer: Service, Sendable {
    /// The longest message, in bytes: as the main socket's line.
    public static let maxMessageLength = SocketServer.maxLineLength

    private let engine: Engine
    private let listener: SocketServer.Listener
    private let logger: Logger
    private let openConnections = Atomic<Int>(0)
    private let connectionsPerUID = NIOLockedValueBox<[UInt32: Int]>([:])

    private let server: NIOAsyncChannel<(Connection, Peer?), Never>

    private init(engine: Engine, listener: SocketServer.Listener, logger: Logger,
                 server: NIOAsyncChannel<(Connection, Peer?), Never>) {
        self.engine = engine
        self.listener = listener
        self.logger = logger
        self.server = server
    }

    /// Binds the agent's socket (with its mode and group when it is made by path) and returns
    /// the server that will serve it. The daemon calls this before its services run, as it
    /// binds the metrics socket: the mode comes from the process's umask while `bind` runs
    /// (``SocketFileOwnership``), so no two sockets may be bound at once.
    public static func bind(engine: Engine, listener: SocketServer.Listener, logger: Logger) async throws -> SSHAgentServer {
        let server = try await bind(engine: engine, listener: listener)
        if case let .path(path, mode, group) = listener {
            do {
                try SocketServer.setPermissions(path: path, mode: mode, group: group)
            } catch {
                try? await server.channel.close()
                throw error
            }
        }
        return SSHAgentServer(engine: engine, listener: listener, logger: logger, server: server)
    }

    public func run() async throws {
        let server = self.server
        logger.notice("ssh-agent listening", metadata: ["socket": "\(describe(listener))"])
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
        }
        if case let .path(path, _, _) = listener { unlink(path) }
        logger.notice("ssh-agent stopped listening")
    }

    private typealias Connection = StreamConnection<SSHAgentFrame>

    private static func bind(engine: Engine, listener: SocketServer.Listener) async throws -> NIOAsyncChannel<(Connection, Peer?), Never> {
        try await listener.bind(role: "ssh_agent.socket") { channel in
            try channel.pipeline.syncOperations.addHandlers(
                IdleStateHandler(readTimeout: .seconds(Int64(engine.idleTimeoutSeconds))),
                CloseOnIdleHandler(),
                ByteToMessageHandler(SSHAgentFrameDecoder(maxLength: maxMessageLength))
            )
        }
    }

    private func serve(_ accepted: (Connection, Peer?), open: Int) async {
        let (connection, peer) = accepted
        do {
            try await connection.executeThenClose { _ in
                guard open <= engine.maxConnections else {
                    logger.warning("ssh-agent connection refused: too many connections", metadata: ["max": "\(engine.maxConnections)"])
                    return
                }
                guard let peer else { return }
                guard engine.admit(peer) != .refused else {
                    logger.warning("ssh-agent refused peer", metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)", "comm": "\(peer.comm)"])
                    return
                }
                let perUID = engine.config.server.maxConnectionsPerUID
                guard claimSlot(uid: peer.uid, limit: perUID) else {
                    logger.warning("ssh-agent connection refused: too many connections of one uid",
                                   metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)", "max": "\(perUID)"])
                    return
                }
                defer { releaseSlot(uid: peer.uid) }
                // On graceful shutdown the connection stops reading: the request in flight is
                // answered, then it closes; one that cannot finish within the main socket's
                // grace is closed outright (an idle agent client must not hold up the stop).
                try await withGracefulShutdownHandler {
                    while let frame = try await connection.next() {
                        switch frame {
                        case let .malformed(why):
                            logger.warning("ssh-agent connection closed", metadata: ["why": .string(why), "uid": "\(peer.uid)", "pid": "\(peer.pid)"])
                            return
                        case let .message(message):
                            guard engine.admit(peer) != .refused else {
                                logger.warning("ssh-agent refused peer after reload", metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)"])
                                return
                            }
                            let reply = await handle(message, peer: peer)
                            try await connection.write(ByteBuffer(bytes: reply))
                        }
                    }
                } onGracefulShutdown: {
                    let channel = connection.channel
                    channel.close(mode: .input, promise: nil)
                    channel.eventLoop.scheduleTask(in: SocketServer.shutdownGrace + SocketServer.shutdownWriteGrace) {
                        channel.close(promise: nil)
                    }
                }
                await connection.channel.repliesWrittenOut()
            }
        } catch {
            logger.debug("ssh-agent connection ended", metadata: ["error": "\(error)"])
        }
    }

    /// The reply to one message (its type byte first).
    private func handle(_ message: [UInt8], peer: Peer) async -> [UInt8] {
        var reader = SSHWireReader(message)
        let type = reader.byte()!
        switch type {
        case SSHAgentMessage.requestIdentities:
            return SSHAgentMessage.identities(engine.sshAgentIdentities())
        case SSHAgentMessage.signRequest:
            guard let keyBlob = reader.string(), let data = reader.string(), reader.uint32() != nil, reader.isAtEnd else {
                logger.warning("ssh-agent refused", metadata: ["why": "a malformed SIGN_REQUEST", "uid": "\(peer.uid)", "pid": "\(peer.pid)"])
                return SSHAgentMessage.frame(SSHAgentMessage.failure)
            }
            guard let signature = await engine.sshAgentSign(keyBlob: keyBlob, data: data, peer: peer, now: Date()) else {
                return SSHAgentMessage.frame(SSHAgentMessage.failure)
            }
            return SSHAgentMessage.signResponse(signature)
        default:
            logger.info("ssh-agent refused", metadata: [
                "why": .string("\(SSHAgentMessage.refusedNames[type] ?? "message \(type)") is not supported"),
                "uid": "\(peer.uid)", "pid": "\(peer.pid)", "comm": .string(peer.comm),
            ])
            return SSHAgentMessage.frame(SSHAgentMessage.failure)
        }
    }

    private func claimSlot(uid: UInt32, limit: Int) -> Bool {
        connectionsPerUID.withLockedValue { counts in
            let open = counts[uid, default: 0]
            guard open < limit else { return false }
            counts[uid] = open + 1
            return true
        }
    }

    private func releaseSlot(uid: UInt32) {
        connectionsPerUID.withLockedValue { counts in
            let open = counts[uid, default: 1] - 1
            counts[uid] = open > 0 ? open : nil
        }
    }

    private func describe(_ listener: SocketServer.Listener) -> String {
        switch listener {
        case let .path(path, _, _): path
        case let .inherited(descriptor): "inherited fd \(descriptor)"
        }
    }
}
