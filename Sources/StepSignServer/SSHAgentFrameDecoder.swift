import NIOCore

/// One unit of input on an SSH agent connection.
enum SSHAgentFrame: Sendable {
    /// One message: its type byte and contents, without the length.
    case message([UInt8])
    /// A length over the limit, or an empty message: the connection is closed, as OpenSSH's
    /// agent closes it (`AGENT_MAX_LEN`).
    case malformed(String)
}

/// Splits the byte stream into agent messages (draft-miller-ssh-agent §3: `uint32` length,
/// then that many bytes) of at most `maxLength` bytes. After a malformed frame it reads
/// nothing more: the server closes the connection.
struct SSHAgentFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = SSHAgentFrame

    let maxLength: Int
    private var failed = false

    init(maxLength: Int) {
        self.maxLength = maxLength
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if failed {
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            return .needMoreData
        }
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return .needMoreData }
        guard length >= 1, length <= maxLength else {
            failed = true
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            context.fireChannelRead(wrapInboundOut(.malformed(length == 0 ? "an empty message"
                                                              : "a message of \(length) bytes, more than \(maxLength)")))
            return .needMoreData
        }
        guard buffer.readableBytes >= 4 + Int(length) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 4)
        let message = buffer.readBytes(length: Int(length))!
        context.fireChannelRead(wrapInboundOut(.message(message)))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // A message cut off by the end of input is not one; drop it.
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        return .needMoreData
    }
}
