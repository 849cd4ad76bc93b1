import NIOCore
import StepSignProtocol

extension Reply {
    /// Writes the reply line into `buffer`, cleared first (a signing reply is about 1.4 KB).
    ///
    /// Written into `scratch` first, with the protocol module's own `[UInt8]` writer, then
    /// copied into the buffer in one piece: `scratch` is the connection's, emptied and reused
    /// for every reply, so its storage is allocated once. (A `JSONOutput` over the
    /// `ByteBuffer` wrote the line through the generic writer from this module, unspecialized:
    /// five times the cost of the copy; issue 43.) `buffer` is the connection's too: once the
    /// channel has written a reply out it holds no reference to it, so clearing it reuses its
    /// storage and a reply allocates nothing; while the channel still holds the last one (a peer
    /// that does not read), clearing gives the buffer new storage and leaves that one alone.
    func write(into buffer: inout ByteBuffer, scratch: inout [UInt8]) {
        scratch.removeAll(keepingCapacity: true)
        write(into: &scratch)
        buffer.clear()
        buffer.writeBytes(scratch)
    }

    /// The reply line in a new buffer, for the replies a connection sends once.
    func buffer(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var scratch: [UInt8] = []
        var buffer = allocator.buffer(capacity: 0)
        write(into: &buffer, scratch: &scratch)
        return buffer
    }
}
