import NIOCore

extension Channel {
    /// Returns once every reply written to the channel before the call has gone to the socket,
    /// or the channel has closed.
    ///
    /// `StreamConnection.executeThenClose` (as `NIOAsyncChannel`'s did) closes the channel as
    /// soon as its body returns, and a close drops the writes NIO still holds (up to the 64 KiB
    /// high watermark) for a client that reads more slowly than the daemon answers: a client
    /// that ends its input and reads afterwards, or one reading when shutdown's grace ends, lost
    /// replies of requests the daemon had done. An empty write queued behind them completes when
    /// they have gone out; what bounds the wait is what bounds any connection: the idle timeout,
    /// and on shutdown the close scheduled at the end of the write grace.
    func repliesWrittenOut() async {
        try? await writeAndFlush(ByteBuffer()).get()
    }
}
