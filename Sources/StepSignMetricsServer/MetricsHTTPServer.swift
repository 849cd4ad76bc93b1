#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Prometheus
import ServiceLifecycle
import StepSignNIO
import Synchronization

/// `GET /metrics` in Prometheus's text format (issue 27), over HTTP/1.1 on a Unix socket (the
/// default: the hardened unit keeps `PrivateNetwork=yes`) or a loopback TCP port. Nothing else
/// is served (404 for other paths, 405 for other methods, 413 for a request with a body).
/// Bounded like the daemon's own socket: at most `maxConnections` open, each closed after
/// `idleTimeout` without a request; on graceful shutdown the listener closes first.
public final class MetricsHTTPServer: Service, Sendable {
    /// Where to listen.
    public enum Address: Sendable, Equatable {
        case unix(path: String)
        case tcp(host: String, port: Int)
    }

    public let maxConnections: Int
    /// The address it listens on (a TCP port of 0 made concrete).
    public let localAddress: SocketAddress?
    private let registry: PrometheusCollectorRegistry
    private let logger: Logger
    private let server: NIOAsyncChannel<Connection, Never>
    /// The Unix socket's path, removed when the server stops.
    private let unixPath: String?
    private let openConnections = Atomic<Int>(0)

    private typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    /// Binds `address` now (the daemon's start, before it serves: a Unix socket is created
    /// under the umask the caller sets, `SocketFileOwnership.binding`), to serve once run.
    public static func bind(_ address: Address, registry: PrometheusCollectorRegistry, maxConnections: Int = 16,
                            idleTimeout: TimeAmount = .seconds(30), logger: Logger) async throws -> MetricsHTTPServer {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        let initializer: @Sendable (any Channel) -> EventLoopFuture<Connection> = { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                try channel.pipeline.syncOperations.addHandlers(IdleStateHandler(readTimeout: idleTimeout),
                                                                CloseOnIdleHandler())
                return try Connection(wrappingChannelSynchronously: channel)
            }
        }
        let server: NIOAsyncChannel<Connection, Never> = switch address {
        case let .unix(path):
            try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true,
                                     childChannelInitializer: initializer)
        case let .tcp(host, port):
            try await bootstrap.bind(host: host, port: port, childChannelInitializer: initializer)
        }
        let unixPath: String? = if case let .unix(path) = address { path } else { nil }
        return MetricsHTTPServer(server: server, unixPath: unixPath, registry: registry, maxConnections: maxConnections,
                                 logger: logger)
    }

    private init(server: NIOAsyncChannel<Connection, Never>, unixPath: String?, registry: PrometheusCollectorRegistry,
                 maxConnections: Int, logger: Logger) {
        self.server = server
        self.unixPath = unixPath
        self.registry = registry
        self.maxConnections = maxConnections
        self.logger = logger
        self.localAddress = server.channel.localAddress
    }

    public func run() async throws {
        logger.notice("metrics listening", metadata: ["address": "\(localAddress.map { "\($0)" } ?? "?")"])
        let server = self.server
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { connections in
                    for try await connection in connections {
                        let open = openConnections.wrappingAdd(1, ordering: .relaxed).newValue
                        group.addTask {
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
        if let unixPath { unlink(unixPath) }
    }

    /// Serves one connection's requests in turn until it closes.
    private func serve(_ connection: Connection) async {
        do {
            try await connection.executeThenClose { inbound, outbound in
                var head: HTTPRequestHead?
                for try await part in inbound {
                    switch part {
                    case let .head(requestHead):
                        head = requestHead
                        let declared = requestHead.headers.first(name: "content-length").flatMap { Int($0) } ?? 0
                        if declared > 0 || requestHead.headers.contains(name: "transfer-encoding") {
                            try await respond(outbound, status: 413, body: Array("no request body here\n".utf8), keepAlive: false)
                            return
                        }
                    case .body:
                        try await respond(outbound, status: 413, body: Array("no request body here\n".utf8), keepAlive: false)
                        return
                    case .end:
                        guard let requestHead = head else { continue }
                        head = nil
                        let (status, body) = answer(requestHead)
                        try await respond(outbound, status: status, body: body, keepAlive: requestHead.isKeepAlive,
                                          exposition: status == 200)
                        if !requestHead.isKeepAlive { return }
                    }
                }
            }
        } catch {
            logger.debug("metrics connection ended", metadata: ["error": "\(error)"])
        }
    }

    private func answer(_ head: HTTPRequestHead) -> (Int, [UInt8]) {
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard path == "/metrics" else { return (404, Array("not found: GET /metrics\n".utf8)) }
        guard head.method == .GET else { return (405, Array("only GET\n".utf8)) }
        return (200, registry.emitToBuffer())
    }

    private func respond(_ outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, status: Int, body: [UInt8],
                         keepAlive: Bool, exposition: Bool = false) async throws {
        let type = exposition ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8"
        var headers = HTTPHeaders([("Content-Type", type), ("Content-Length", String(body.count))])
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: .init(statusCode: status), headers: headers)))
        try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body))))
        try await outbound.write(.end(nil))
    }
}
