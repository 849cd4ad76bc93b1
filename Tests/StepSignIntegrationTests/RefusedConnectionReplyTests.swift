#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StepSignClient
import Testing

/// A refused connection (error 13 or 14) is sent one line and closed, possibly before the
/// client's request goes out; `StepSignConnection.call` must still return that line, so the
/// CLI reports the daemon's reason rather than "send: Broken pipe" (issue 13).
@Suite("A refused connection's reply reaches call", .blocking)
struct RefusedConnectionReplyTests {
    @Test("the daemon writes error 14 and closes before the request is sent: call returns that reply")
    func closedBeforeSend() throws {
        let daemon = try DaemonHarness(config: "[server]\nmax_connections = 1")
        // Take the one slot (the harness's start-up probe may still be counted for a moment).
        let deadline = Date().addingTimeInterval(10)
        var holder = try daemon.connect()
        while try holder.call("status").code != 0 {
            #expect(Date() < deadline, "no connection slot came free")
            usleep(50_000)
            holder = try daemon.connect()
        }
        // Waits until the daemon has written its line and closed (the socket is readable and
        // hung up), not for a fixed time: the send then meets EPIPE.
        let socket = try StepSignConnection.connectedSocket(path: daemon.socketPath)
        var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let closed = Date().addingTimeInterval(10)
        while Date() < closed, poller.revents & Int16(POLLHUP) == 0 {
            poller.revents = 0
            _ = poll(&poller, 1, 100)
        }
        #expect(poller.revents & Int16(POLLHUP) != 0, "the daemon closed the refused connection")
        let late = StepSignConnection(adopting: socket)
        let reply = try late.call("status")
        #expect(reply.code == 14)
        #expect(reply.message.contains("too many connections"))
        #expect(try holder.call("status").code == 0)
    }
}
