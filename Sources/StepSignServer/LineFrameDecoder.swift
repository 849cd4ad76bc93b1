import NIOCore

/// One unit of input on a connection.
enum Frame: Sendable {
    /// A request line, without its `\n`.
    case line(ByteBuffer)
    /// A line longer than the limit: the connection gets error 4 and is closed (SPEC §3).
    case tooLong
}

/// Splits the byte stream into `\n`-terminated lines of at most `maxLength` bytes.
struct LineFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = Frame

    let maxLength: Int
    private var scanned = 0
    private var overflowed = false

    init(maxLength: Int) {
        self.maxLength = maxLength
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if overflowed {
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            return .needMoreData
        }
        let view = buffer.readableBytesView
        if let newline = view.dropFirst(scanned).firstIndex(of: 0x0A) {
            let length = newline - view.startIndex
            scanned = 0
            guard length <= maxLength else { return overflow(context: context, buffer: &buffer) }
            var line = buffer.readSlice(length: length)!
            buffer.moveReaderIndex(forwardBy: 1)
            if line.readableBytes > 0, line.getInteger(at: line.writerIndex - 1, as: UInt8.self) == 0x0D {
                line.moveWriterIndex(to: line.writerIndex - 1)
            }
            context.fireChannelRead(wrapInboundOut(.line(line)))
            return .continue
        }
        scanned = view.count
        if view.count > maxLength { return overflow(context: context, buffer: &buffer) }
        return .needMoreData
    }

    private mutating func overflow(context: ChannelHandlerContext, buffer: inout ByteBuffer) -> DecodingState {
        overflowed = true
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        context.fireChannelRead(wrapInboundOut(.tooLong))
        return .needMoreData
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // A last line without its newline is not a request; drop it.
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        return .needMoreData
    }
}
