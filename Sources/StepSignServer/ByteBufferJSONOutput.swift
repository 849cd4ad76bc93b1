import NIOCore
import StepSignProtocol

/// Lets the protocol's ``JSONWriter`` write a reply straight into the `ByteBuffer` that is sent.
struct ByteBufferJSONOutput: JSONOutput {
    var buffer: ByteBuffer

    @inlinable
    mutating func appendByte(_ byte: UInt8) {
        buffer.writeInteger(byte)
    }

    @inlinable
    mutating func appendBytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        buffer.writeBytes(bytes)
    }
}

extension Reply {
    /// The reply line in a new buffer, written once (a signing reply is about 1.3 KB).
    func buffer(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var writer = JSONWriter(into: ByteBufferJSONOutput(buffer: allocator.buffer(capacity: 2048)))
        write(to: &writer)
        return writer.output.buffer
    }
}
