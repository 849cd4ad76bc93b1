import NIOCore
import NIOPosix
import StepSignEngine
import StepSignNIO

extension SocketServer.Listener {
    /// Binds this listener for a server whose connections carry `Inbound` frames: the main
    /// socket's lines and the SSH agent's messages (SPEC §3, §3.5) share everything but the
    /// handlers. Each accepted connection reads its peer's credentials first (nil when the
    /// kernel gives none), then gets `handlers` and is wrapped for its task (``StreamConnection``). A socket made at
    /// a path takes its mode from the umask at creation, never from a chmod by path afterwards
    /// (``SocketFileOwnership``); a failure names `role`, the key that configured it.
    func bind<Inbound: Sendable>(
        role: String,
        handlers: @escaping @Sendable (Channel) throws -> Void
    ) async throws -> NIOAsyncChannel<(StreamConnection<Inbound>, Peer?), Never> {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            // Closing a connection's input (shutdown, or a client that half-closes after its
            // last request) must not close its output: the replies still have to go out.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
        let initializer: @Sendable (Channel) -> EventLoopFuture<(StreamConnection<Inbound>, Peer?)> = { channel in
            PeerCredentials.read(channel).map { Optional($0) }.recover { _ in nil }.flatMapThrowing { peer in
                try handlers(channel)
                return (try StreamConnection(wrappingChannelSynchronously: channel), peer)
            }
        }
        switch self {
        case let .path(path, mode, _):
            do {
                return try await SocketFileOwnership.binding(mode: mode) {
                    try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true,
                                             childChannelInitializer: initializer)
                }
            } catch {
                throw ServerError.binding(error, address: path, role: role)
            }
        case let .inherited(descriptor):
            return try await bootstrap.bind(descriptor, childChannelInitializer: initializer)
        }
    }
}
