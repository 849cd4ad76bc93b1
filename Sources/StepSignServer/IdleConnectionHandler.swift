import NIOCore
import StepSignProtocol
import StepSignEngine

/// Closes a connection that has been idle for the idle timeout in force (SPEC §3): it is sent
/// one reply line with error 5 (`id` null) and closed, so an idle connection never holds a
/// connection slot.
///
/// Sits after the `LineFrameHandler`. A connection is idle while every request frame read has
/// been answered: it counts the frames read (the requests) and the lines written (the replies;
/// the server writes one line per reply). A request in flight, such as one waiting for a
/// password check, and requests read but still queued behind it, keep the connection busy.
///
/// The hot path reads the event loop's clock once per reply and schedules nothing: one timer
/// per connection is armed for the earliest moment the connection could expire and, when it
/// fires early (the connection was busy since), re-armed for the new deadline. The timeout is
/// read through `timeout` each time the timer is armed, so a reload (SIGHUP) applies to open
/// connections from their next check.
final class IdleConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = Frame
    typealias InboundOut = Frame
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The message of the error-5 line an idle connection gets.
    static let message = "the connection was idle longer than server.idle_timeout_seconds and is closed"

    private let timeout: () -> TimeAmount
    /// Requests read and not yet answered.
    private var outstanding = 0
    /// When the last outstanding request was answered (or the connection opened); nil while
    /// a request is outstanding.
    private var idleSince: NIODeadline?
    private var timer: Scheduled<Void>?
    private var started = false
    private var expired = false

    /// - Parameter timeout: the idle timeout in force; called on the channel's event loop.
    init(timeout: @escaping () -> TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !expired else { return }
        outstanding += 1
        idleSince = nil
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if outstanding > 0 {
            outstanding -= 1
            if outstanding == 0 { idleSince = context.eventLoop.now }
        }
        context.write(data, promise: promise)
    }

    private func start(context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        let now = context.eventLoop.now
        idleSince = now
        arm(context: context, deadline: now + timeout())
    }

    private func stop() {
        timer?.cancel()
        timer = nil
    }

    private func arm(context: ChannelHandlerContext, deadline: NIODeadline) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            self.check(context: context)
        }
    }

    private func check(context: ChannelHandlerContext) {
        timer = nil
        guard context.channel.isActive, !expired else { return }
        let now = context.eventLoop.now
        guard let idleSince else {
            // Busy: it can expire no sooner than a full timeout after its current request ends.
            arm(context: context, deadline: now + timeout())
            return
        }
        let deadline = idleSince + timeout()
        guard deadline <= now else {
            arm(context: context, deadline: deadline)
            return
        }
        expired = true
        let reply = Reply(id: .null, error: StepSignError(.sessionExpired, Self.message))
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: reply.line)), promise: nil)
        context.close(promise: nil)
    }
}
