import NIOConcurrencyHelpers
import StepSignProtocol
import NIOCore
import NIOEmbedded
@testable import StepSignEngine
@testable import StepSignServer
import Testing

/// `IdleConnectionHandler` on an `EmbeddedChannel`, whose event loop's clock the tests move.
@Suite("Idle connections")
struct IdleConnectionHandlerTests {
    /// A connected channel with the handler, and the timeout it reads (changeable, as a reload).
    private func channel(timeout seconds: Int64 = 1) throws -> (EmbeddedChannel, NIOLockedValueBox<Int64>) {
        let timeout = NIOLockedValueBox(seconds)
        let channel = EmbeddedChannel(handler: IdleConnectionHandler(timeout: { .seconds(timeout.withLockedValue { $0 }) }))
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/tmp/idle-test.sock")).wait()
        return (channel, timeout)
    }

    private func request(_ channel: EmbeddedChannel) throws {
        try channel.writeInbound(Frame.line(ByteBuffer(string: #"{"id":1,"op":"status"}"#)))
        #expect(try channel.readInbound(as: Frame.self) != nil, "the frame passes on")
    }

    private func reply(_ channel: EmbeddedChannel) throws {
        try channel.writeOutbound(ByteBuffer(string: "{\"id\":1}\n"))
        #expect(try channel.readOutbound(as: ByteBuffer.self) != nil, "the reply passes on")
    }

    /// The line the handler wrote, if any.
    private func expiryLine(_ channel: EmbeddedChannel) throws -> JSONValue? {
        guard var buffer = try channel.readOutbound(as: ByteBuffer.self) else { return nil }
        let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
        #expect(bytes.last == 0x0A, "one line")
        return try JSONParser.parse(bytes.dropLast())
    }

    private func expectExpired(_ channel: EmbeddedChannel) throws {
        let line = try #require(try expiryLine(channel))
        #expect(line["id"] == .null)
        #expect(line["error"]?["code"] == 5)
        #expect(line["events"] == [])
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil, "exactly one line")
        #expect(!channel.isActive, "closed")
    }

    @Test("a silent connection gets one error-5 line with id null at the timeout, then is closed")
    func silentConnection() throws {
        let (channel, _) = try channel()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(999))
        #expect(try expiryLine(channel) == nil)
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        try expectExpired(channel)
    }

    @Test("a request in flight is not idle, however long it takes; the timeout counts from its reply")
    func requestInFlight() throws {
        let (channel, _) = try channel()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(500))
        try request(channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(10))
        #expect(try expiryLine(channel) == nil)
        #expect(channel.isActive)
        try reply(channel)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(999))
        #expect(try expiryLine(channel) == nil)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        try expectExpired(channel)
    }

    @Test("pipelined requests keep the connection busy until the last is answered")
    func pipelined() throws {
        let (channel, _) = try channel()
        try request(channel)
        try request(channel)
        try reply(channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(3))
        #expect(try expiryLine(channel) == nil)
        try reply(channel)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(999))
        #expect(try expiryLine(channel) == nil)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        try expectExpired(channel)
    }

    @Test("a connection that keeps asking within the timeout never expires")
    func activeConnection() throws {
        let (channel, _) = try channel()
        for _ in 0..<20 {
            channel.embeddedEventLoop.advanceTime(by: .milliseconds(900))
            try request(channel)
            try reply(channel)
        }
        #expect(try expiryLine(channel) == nil)
        #expect(channel.isActive)
        _ = try channel.finish()
    }

    @Test("a line written with no request outstanding (a refusal) does not make the connection busy")
    func unsolicitedLine() throws {
        let (channel, _) = try channel()
        try reply(channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        try expectExpired(channel)
    }

    @Test("the timeout in force is read again at each check, so a reload applies to open connections")
    func reloadedTimeout() throws {
        let (channel, timeout) = try channel(timeout: 1)
        timeout.withLockedValue { $0 = 3 }
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(2999))
        #expect(try expiryLine(channel) == nil)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        try expectExpired(channel)
    }

    @Test("a closed connection writes nothing more")
    func closedConnection() throws {
        let (channel, _) = try channel()
        try channel.close().wait()
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
    }
}
