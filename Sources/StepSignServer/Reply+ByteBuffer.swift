import NIOCore
import StepSignProtocol

extension Reply {
    /// The reply line in a new buffer (a signing reply is about 1.3 KB).
    ///
    /// Written into `scratch` first, with the protocol module's own `[UInt8]` writer, then
    /// copied into the buffer in one piece: `scratch` is the connection's, emptied and reused
    /// for every reply, so its storage is allocated once. (A `JSONOutput` over the
    /// `ByteBuffer` wrote the line through the generic writer from this module, unspecialized:
    /// five times the cost of the copy; issue 43.)
    func buffer(scratch: inout [UInt8], allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        scratch.removeAll(keepingCapacity: true)
        write(into: &scratch)
        var buffer = allocator.buffer(capacity: scratch.count)
        buffer.writeBytes(scratch)
        return buffer
    }

    /// The reply line in a new buffer, for the replies a connection sends once.
    func buffer(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var scratch: [UInt8] = []
        return buffer(scratch: &scratch, allocator: allocator)
    }
}
