import NIOCore
import Synchronization

/// The last handler of a ``StreamConnection``'s pipeline: it hands the frames read to the
/// connection's task and holds reading back while the task is behind, and it tells a task
/// waiting to write when the channel is writable again.
///
/// Invariants (one state under one lock; the handler's callbacks run on the event loop, the
/// task's calls usually do too, but need not):
/// - a task waits for a frame (`reader`) only while no frame is buffered and the input has not
///   ended; a frame read or the end resumes it at once;
/// - `readPaused` is set when the buffered frames reach `highWatermark` and cleared when the task
///   has taken them down to `lowWatermark`; while set, a `read()` is held (`readHeld`) and passed
///   on when it clears, so the socket is not read meanwhile;
/// - `end` is set once; frames read before it are taken before it is seen; an error is thrown
///   once, then the input reads as ended;
/// - a task waits to write (`writer`) only while the channel is open and not writable, and
///   not after ``cancel()``; `cancel()` ends the input (so no task waits for a frame after it).
final class StreamConnectionHandler<Inbound: Sendable>: ChannelDuplexHandler, @unchecked Sendable {
    typealias InboundIn = Inbound
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Frames read and not yet taken at which reading pauses, and to which the task must take
    /// them down for it to resume (`NIOAsyncChannel`'s defaults).
    static var highWatermark: Int { 10 }
    static var lowWatermark: Int { 2 }

    private enum End {
        case finished
        case failed(any Error)
    }

    private struct State {
        var frames = CircularBuffer<Inbound>(initialCapacity: 4)
        var end: End?
        var reader: UnsafeContinuation<Inbound?, any Error>?
        var readPaused = false
        var readHeld = false
        var writable = true
        var closed = false
        var writer: UnsafeContinuation<Void, any Error>?
        /// Set once by ``cancel()``.
        var cancelled = false
    }

    /// What a task asking for the next frame gets now.
    private enum Take {
        case frame(Inbound, resumeReading: Bool)
        case end(End)
        case wait
    }

    private let state = Mutex(State())
    private let eventLoop: any EventLoop
    /// Set while the handler is in the pipeline; used on the event loop only.
    private var context: ChannelHandlerContext?

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    // MARK: - The task's side

    nonisolated(nonsending) func next() async throws -> Inbound? {
        let now = state.withLock { Self.take(&$0) }
        if case .wait = now {
            return try await waitForFrame()
        }
        return try deliver(now)
    }

    /// Waits for the next frame or the end. No cancellation handler of its own (a status
    /// record added and removed per request, issue 43): the connection's task has one for its
    /// whole life (``StreamConnection/executeThenClose(_:)``), which ends the input through
    /// ``cancel()`` under the same lock, so a cancelled task never waits here.
    private nonisolated(nonsending) func waitForFrame() async throws -> Inbound? {
        try await withUnsafeThrowingContinuation { (reader: UnsafeContinuation<Inbound?, any Error>) in
            let now = state.withLock { state in
                let now = Self.take(&state)
                if case .wait = now { state.reader = reader }
                return now
            }
            if case .wait = now { return }
            reader.resume(with: Result { try deliver(now) })
        }
    }

    /// Takes the next frame, the end, or nothing yet, from `state`.
    private static func take(_ state: inout State) -> Take {
        if let frame = state.frames.popFirst() {
            var resumeReading = false
            if state.readPaused, state.frames.count <= lowWatermark {
                state.readPaused = false
                resumeReading = state.readHeld
                state.readHeld = false
            }
            return .frame(frame, resumeReading: resumeReading)
        }
        guard let end = state.end else { return .wait }
        if case .failed = end { state.end = .finished }
        return .end(end)
    }

    private func deliver(_ take: Take) throws -> Inbound? {
        switch take {
        case let .frame(frame, resumeReading):
            if resumeReading { passReadOn() }
            return frame
        case .end(.finished), .wait:
            return nil
        case let .end(.failed(error)):
            throw error
        }
    }

    /// Passes on the `read()` held while reading was paused, on the event loop.
    private func passReadOn() {
        if eventLoop.inEventLoop {
            context?.read()
        } else {
            eventLoop.execute { self.context?.read() }
        }
    }

    nonisolated(nonsending) func write(_ reply: ByteBuffer, on channel: any Channel) async throws {
        guard eventLoop.inEventLoop, let context else {
            // Off the event loop (or removed): the write's completion is the bound.
            try await channel.writeAndFlush(reply)
            return
        }
        if state.withLock({ $0.closed }) { throw ChannelError.ioOnClosedChannel }
        context.writeAndFlush(wrapOutboundOut(reply), promise: nil)
        // The write above changed the writability synchronously if it filled the buffer.
        guard !state.withLock({ $0.writable }) else { return }
        try await withUnsafeThrowingContinuation { (writer: UnsafeContinuation<Void, any Error>) in
            let ready: Result<Void, any Error>? = state.withLock { state in
                if state.closed { return .failure(ChannelError.ioOnClosedChannel) }
                if state.cancelled { return .failure(CancellationError()) }
                if state.writable { return .success(()) }
                state.writer = writer
                return nil
            }
            if let ready { writer.resume(with: ready) }
        }
    }

    /// The connection's task was cancelled: its input ends (as `NIOAsyncChannel`'s does: a
    /// waiting `next()` returns nil, and so does every later one once the frames read are
    /// taken), and a write waiting for the channel to drain throws `CancellationError`, now or
    /// when it would start waiting.
    func cancel() {
        let (reader, writer) = state.withLock { state in
            state.cancelled = true
            if state.end == nil { state.end = .finished }
            defer {
                state.reader = nil
                state.writer = nil
            }
            return (state.reader, state.writer)
        }
        reader?.resume(returning: nil)
        writer?.resume(throwing: CancellationError())
    }

    // MARK: - The channel's side (event loop)

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish(.finished)
        closed()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let reader = state.withLock { state -> UnsafeContinuation<Inbound?, any Error>? in
            if let reader = state.reader {
                state.reader = nil
                return reader
            }
            state.frames.append(frame)
            if state.frames.count >= Self.highWatermark { state.readPaused = true }
            return nil
        }
        reader?.resume(returning: frame)
    }

    func read(context: ChannelHandlerContext) {
        let pass = state.withLock { state in
            if state.readPaused {
                state.readHeld = true
                return false
            }
            return true
        }
        if pass { context.read() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.finished)
        closed()
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .some(.inputClosed) = event as? ChannelEvent { finish(.finished) }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failed(error))
        context.fireErrorCaught(error)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let writable = context.channel.isWritable
        let writer = state.withLock { state -> UnsafeContinuation<Void, any Error>? in
            state.writable = writable
            guard writable else { return nil }
            defer { state.writer = nil }
            return state.writer
        }
        writer?.resume()
        context.fireChannelWritabilityChanged()
    }

    /// Ends the input (the first end counts); a waiting task gets it at once.
    private func finish(_ end: End) {
        let resumed = state.withLock { state -> (UnsafeContinuation<Inbound?, any Error>, Take)? in
            if state.end == nil { state.end = end }
            guard let reader = state.reader else { return nil }
            state.reader = nil
            return (reader, Self.take(&state))
        }
        guard let (reader, now) = resumed else { return }
        reader.resume(with: Result { try deliver(now) })
    }

    /// The channel has closed: a task waiting to write gets `ioOnClosedChannel`.
    private func closed() {
        let writer = state.withLock { state -> UnsafeContinuation<Void, any Error>? in
            state.closed = true
            defer { state.writer = nil }
            return state.writer
        }
        writer?.resume(throwing: ChannelError.ioOnClosedChannel)
    }
}
