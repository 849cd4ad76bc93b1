import NIOCore

/// One accepted connection as the task that serves it sees it: the frames its peer sent, in
/// order (`next()`), and its replies written back (`write(_:)`), both with bounds a peer cannot
/// lift. The main socket and the SSH agent socket serve their connections through it.
///
/// In place of `NIOAsyncChannel` on the request path (issue 43): a connection's task runs on its
/// channel's event loop (`EventLoopTaskExecutor`), so a frame read is handed to the waiting task
/// with one continuation resumed, and a reply is written and flushed straight into the
/// pipeline; `NIOAsyncChannel`'s generic sequence and writer state machines cost a few µs of
/// CPU per request (docs/performance.md). What it kept bounded stays bounded:
/// - frames read and not yet taken: once there are ``StreamConnectionHandler/highWatermark``,
///   the socket is not read again (the frames of the bytes already read are still handed over:
///   at most one read's worth, NIO's receive buffer) until the task has taken them down to the
///   low watermark;
/// - replies the peer does not read: once they fill the channel's write buffer (NIO's
///   high watermark) `write(_:)` waits until they drain or the channel closes, so the task takes
///   no new request meanwhile, and so, with the bound above, the daemon stops reading the peer.
package final class StreamConnection<Inbound: Sendable>: Sendable {
    package let channel: any Channel
    private let handler: StreamConnectionHandler<Inbound>

    /// Adds the connection's handler at the end of `channel`'s pipeline (after the handlers
    /// that make `Inbound` frames); call on the channel's event loop, before it is active.
    package init(wrappingChannelSynchronously channel: any Channel) throws {
        self.channel = channel
        self.handler = StreamConnectionHandler(eventLoop: channel.eventLoop)
        try channel.pipeline.syncOperations.addHandler(handler)
    }

    /// The next frame the peer sent; nil once its input has ended (it closed or half-closed
    /// the connection, the channel closed, or the task was cancelled) and every frame read
    /// before has been taken. Throws the error the channel met reading, once, after those frames.
    package nonisolated(nonsending) func next() async throws -> Inbound? {
        try await handler.next()
    }

    /// Writes and flushes `reply`; returns once it is in the channel, or, if that filled the
    /// channel's write buffer, once the buffer has drained (the peer reads). Throws
    /// `ChannelError.ioOnClosedChannel` if the channel has closed.
    package nonisolated(nonsending) func write(_ reply: ByteBuffer) async throws {
        try await handler.write(reply, on: channel)
    }

    /// Runs `body` with this connection, then closes the channel whatever `body` did; rethrows
    /// `body`'s error. If the task is cancelled meanwhile, the connection's input ends (`next()`
    /// returns nil) and a write waiting for the peer to read throws `CancellationError`: one
    /// cancellation handler for the connection's life, not one per frame awaited.
    package nonisolated(nonsending) func executeThenClose<Value>(
        _ body: nonisolated(nonsending) (StreamConnection<Inbound>) async throws -> Value
    ) async throws -> Value {
        let outcome: Result<Value, any Error>
        do {
            let handler = self.handler
            outcome = .success(try await withTaskCancellationHandler {
                try await body(self)
            } onCancel: {
                handler.cancel()
            })
        } catch {
            outcome = .failure(error)
        }
        try? await channel.close()
        return try outcome.get()
    }
}
