import NIOCore

/// Closes a connection that read nothing for the time of the ``IdleStateHandler`` before it
/// in the pipeline: the HTTP servers' (the witness's, the metrics endpoint's) idle bound.
public final class CloseOnIdleHandler: ChannelInboundHandler, Sendable {
    public typealias InboundIn = NIOAny

    public init() {}

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
