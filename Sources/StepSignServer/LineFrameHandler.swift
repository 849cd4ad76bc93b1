import NIOCore

/// One unit of input on a connection.
enum Frame: Sendable {
    /// A request line, without its `\n`.
    case line(ByteBuffer)
    /// A line longer than the limit: the connection gets error 4 and is closed (SPEC §3).
    case tooLong
}

/// Splits the byte stream into `\n`-terminated lines of at most `maxLength` bytes.
///
/// A handler of its own rather than a `ByteToMessageDecoder`: NIO's generic decoding handler
/// cost about 0.5 µs a request in its own bookkeeping and generic metadata look-ups (issue 43).
/// Each line is a slice of the bytes read (no copy); bytes of a line not yet ended are kept
/// (`pending`, at most `maxLength` of them) until the rest arrives. A line past the limit is
/// `.tooLong`, once, and everything after it is dropped (the server answers 4 and closes). A
/// last line without its newline, at the end of the input, is not a request and is dropped.
final class LineFrameHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = Frame

    let maxLength: Int
    /// The bytes read after the last newline, while they are not yet a line.
    private var pending: ByteBuffer?
    /// How many of `pending`'s bytes are known to hold no newline.
    private var scanned = 0
    private var overflowed = false

    init(maxLength: Int) {
        self.maxLength = maxLength
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !overflowed else { return }
        var buffer = unwrapInboundIn(data)
        if var kept = pending {
            pending = nil
            kept.writeBuffer(&buffer)
            buffer = kept
        }
        while true {
            let view = buffer.readableBytesView
            guard let newline = view.dropFirst(scanned).firstIndex(of: 0x0A) else {
                scanned = view.count
                if view.count > maxLength {
                    overflow(context: context)
                } else if view.count > 0 {
                    pending = buffer
                }
                return
            }
            let length = newline - view.startIndex
            scanned = 0
            guard length <= maxLength else {
                overflow(context: context)
                return
            }
            var line = buffer.readSlice(length: length)!
            buffer.moveReaderIndex(forwardBy: 1)
            if line.readableBytes > 0, line.getInteger(at: line.writerIndex - 1, as: UInt8.self) == 0x0D {
                line.moveWriterIndex(to: line.writerIndex - 1)
            }
            context.fireChannelRead(wrapInboundOut(.line(line)))
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The input ended: a last line without its newline is dropped.
        if case .some(.inputClosed) = event as? ChannelEvent { dropPending() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        dropPending()
        context.fireChannelInactive()
    }

    private func dropPending() {
        pending = nil
        scanned = 0
    }

    private func overflow(context: ChannelHandlerContext) {
        overflowed = true
        dropPending()
        context.fireChannelRead(wrapInboundOut(.tooLong))
    }
}
