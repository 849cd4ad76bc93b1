import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import StepSignNIO
import Synchronization

/// The witness's HTTP/1.1 server (SwiftNIO): `POST <prefix>/add-checkpoint` of C2SP
/// tlog-witness v1, and nothing else (404 for other paths, 405 for other methods).
///
/// It is meant to face the network, so every cost a client can cause is bounded: a body larger
/// than any valid request gets 413 and the connection closes at once; headers are bounded by
/// the HTTP parser; at most `maxConnections` connections are open (more are closed on accept);
/// a connection idle for `idleTimeout` is closed; each connection has one request in work at a
/// time; the checks and the `fsync` run on a fixed pool of threads. On graceful shutdown the
/// listener closes and the requests in work finish.
public final class WitnessHTTPServer: Service, Sendable {
    /// Where to listen: a host (an IP address) and a port (0: any free port).
    public let host: String
    public let port: Int
    /// The prefix of the URL path (`/witness` for `/witness/add-checkpoint`; empty for none).
    public let prefix: String
    public let maxConnections: Int
    public let idleTimeout: TimeAmount
    private let witness: Witness
    private let threadPool: NIOThreadPool
    private let logger: Logger
    private let onListening: @Sendable (SocketAddress) -> Void
    private let openConnections = Atomic<Int>(0)

    public init(witness: Witness, host: String, port: Int, prefix: String = "", maxConnections: Int = 256,
                idleTimeout: TimeAmount = .seconds(30), threads: Int = 4, logger: Logger,
                onListening: @escaping @Sendable (SocketAddress) -> Void = { _ in }) {
        self.witness = witness
        self.host = host
        self.port = port
        self.prefix = prefix.hasSuffix("/") ? String(prefix.dropLast()) : prefix
        self.maxConnections = maxConnections
        self.idleTimeout = idleTimeout
        self.threadPool = NIOThreadPool(numberOfThreads: threads)
        self.logger = logger
        self.onListening = onListening
    }

    private typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    public func run() async throws {
        threadPool.start()
        defer { threadPool.shutdownGracefully { _ in } }
        let idleTimeout = self.idleTimeout
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandlers(
                        IdleStateHandler(readTimeout: idleTimeout), CloseOnIdleHandler())
                    return try Connection(wrappingChannelSynchronously: channel)
                }
            }
        if let address = server.channel.localAddress {
            logger.notice("listening", metadata: ["address": "\(address)", "key": "\(witness.verifierKey)"])
            onListening(address)
        }
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { connections in
                    for try await connection in connections {
                        let open = openConnections.wrappingAdd(1, ordering: .relaxed).newValue
                        // The connection's task runs on its event loop (no hop per read or
                        // write); only the check and its fsync go to the thread pool.
                        let executor = EventLoopTaskExecutor(connection.channel.eventLoop)
                        group.addTask(executorPreference: executor) {
                            defer { self.openConnections.wrappingSubtract(1, ordering: .relaxed) }
                            guard open <= self.maxConnections else {
                                try? await connection.channel.close()
                                return
                            }
                            await self.serve(connection)
                        }
                    }
                }
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)
        }
        logger.notice("stopped listening")
    }

    /// Serves one connection's requests in turn until it closes.
    private func serve(_ connection: Connection) async {
        do {
            try await connection.executeThenClose { inbound, outbound in
                var head: HTTPRequestHead?
                var body = ByteBuffer()
                var tooLarge = false
                for try await part in inbound {
                    switch part {
                    case let .head(requestHead):
                        head = requestHead
                        body.clear()
                        let declared = requestHead.headers.first(name: "content-length").flatMap { Int($0) } ?? 0
                        tooLarge = declared > AddCheckpointRequest.maxBodySize
                    case var .body(chunk):
                        if !tooLarge, body.readableBytes + chunk.readableBytes <= AddCheckpointRequest.maxBodySize {
                            body.writeBuffer(&chunk)
                        } else {
                            tooLarge = true
                        }
                    case .end:
                        break
                    }
                    guard let requestHead = head else { continue }
                    if tooLarge {
                        // Answer at once and close: the rest of the body is never read.
                        let refusal = WitnessRefusal.tooLarge(limit: AddCheckpointRequest.maxBodySize)
                        try await respond(outbound, status: refusal.status, type: refusal.contentType,
                                          body: refusal.body, keepAlive: false)
                        return
                    }
                    guard case .end = part else { continue }
                    head = nil
                    let (status, type, text) = await answer(requestHead, body: body)
                    try await respond(outbound, status: status, type: type, body: text, keepAlive: requestHead.isKeepAlive)
                    if !requestHead.isKeepAlive { return }
                }
            }
        } catch {
            logger.debug("connection ended", metadata: ["error": "\(error)"])
        }
    }

    private func answer(_ head: HTTPRequestHead, body: ByteBuffer) async -> (Int, String, String) {
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard path == prefix + "/add-checkpoint" else { return (404, "text/plain; charset=utf-8", "not found\n") }
        guard head.method == .POST else { return (405, "text/plain; charset=utf-8", "only POST\n") }
        let bytes = Array(body.readableBytesView)
        let witness = self.witness
        let result: Result<String, WitnessRefusal>
        do {
            result = try await threadPool.runIfActive { witness.addCheckpoint(body: bytes) }
        } catch {
            return (503, "text/plain; charset=utf-8", "the witness is stopping\n")
        }
        switch result {
        case let .success(lines): return (200, "text/plain; charset=utf-8", lines)
        case let .failure(refusal): return (refusal.status, refusal.contentType, refusal.body)
        }
    }

    private func respond(_ outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, status: Int,
                         type: String, body: String, keepAlive: Bool) async throws {
        var headers = HTTPHeaders([("Content-Type", type), ("Content-Length", String(body.utf8.count))])
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: .init(statusCode: status), headers: headers)))
        try await outbound.write(.body(.byteBuffer(ByteBuffer(string: body))))
        try await outbound.write(.end(nil))
    }
}
