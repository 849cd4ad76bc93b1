import Foundation
import StepSignClient
import Testing

/// The server's limits (SPEC §3, §6 `[server]`): connections, connections per uid, idle
/// connections, open challenges. The line limit is in the protocol suite.
@Suite("Limits", .blocking)
struct LimitsTests {
    /// A connection that has been served (`status` answered 0), retrying while connections
    /// closed a moment ago are still being counted.
    private func servedConnection(_ daemon: DaemonHarness) throws -> StepSignConnection {
        let deadline = Date().addingTimeInterval(10)
        while true {
            let connection = try daemon.connect()
            if try connection.call("status").code == 0 { return connection }
            guard Date() < deadline else { throw HarnessError.refused(14, "no connection slot came free") }
            usleep(50_000)
        }
    }

    @Test("one connection past max_connections gets one reply with error 14 and is closed; a slot that frees up is reused")
    func maxConnections() throws {
        let daemon = try DaemonHarness(config: "[server]\nmax_connections = 2")
        var first: StepSignConnection? = try servedConnection(daemon)
        let second = try servedConnection(daemon)
        let third = try daemon.connect()
        let refused = try ClientReply(line: third.readLine())
        #expect(refused.code == 14)
        #expect(refused.events.isEmpty)
        #expect(throws: ClientError.self) { try third.readLine(timeout: 10) }
        #expect(try second.call("status").code == 0)
        _ = first
        first = nil
        #expect(try servedConnection(daemon).call("status").code == 0)
        #expect(daemon.log.contains("too many connections"))
    }

    /// A daemon started without the harness's probe connection (waiting for its "listening"
    /// log line instead), so that the test's own connections are its first: a silent socket
    /// cannot show it holds a slot, and a probe still being counted out would take one.
    private func daemonWithoutProbe(config: String) throws -> DaemonHarness {
        let daemon = try DaemonHarness(config: config, start: false)
        try daemon.start(waitForSocket: false)
        let deadline = Date().addingTimeInterval(60)
        while !daemon.log.contains("listening") {
            guard Date() < deadline else { throw HarnessError.notReady(log: daemon.log) }
            usleep(20_000)
        }
        return daemon
    }

    @Test("silent connections holding every slot are sent error 5 (id null) at the idle timeout and closed; the slots free up")
    func idleConnectionsFreeTheirSlots() throws {
        let daemon = try daemonWithoutProbe(config: "[server]\nmax_connections = 4\nidle_timeout_seconds = 1")
        let opened = Date()
        let silent = try (0..<4).map { _ in try RawClient(socketPath: daemon.socketPath) }
        // All four slots are held: one more is refused at once.
        let extra = try RawClient(socketPath: daemon.socketPath)
        #expect(try extra.reply(timeout: 10).code == 14)
        #expect(extra.next(timeout: 10) == .closed)
        for client in silent {
            let expired = try client.reply(timeout: 10)
            #expect(expired.code == 5)
            #expect(expired.id == .null)
            #expect(expired.events.isEmpty)
            #expect(client.next(timeout: 10) == .closed)
        }
        #expect(Date().timeIntervalSince(opened) >= 0.9, "not before the idle timeout")
        #expect(try servedConnection(daemon).call("status").code == 0)
    }

    // A connection that keeps asking within the idle timeout stays open: IdleConnectionHandlerTests
    // in StepSignServerTests, on an EmbeddedEventLoop's clock.

    @Test("one connection past max_connections_per_uid gets error 14 and is closed; the others keep working; closing one frees a slot")
    func maxConnectionsPerUID() throws {
        let daemon = try DaemonHarness(config: "[server]\nmax_connections_per_uid = 3")
        var first: StepSignConnection? = try servedConnection(daemon)
        let second = try servedConnection(daemon)
        let third = try servedConnection(daemon)
        let fourth = try daemon.connect()
        let refused = try ClientReply(line: fourth.readLine(timeout: 10))
        #expect(refused.code == 14)
        #expect(refused.id == .null)
        #expect(refused.message.contains("max_connections_per_uid"))
        #expect(throws: ClientError.self) { try fourth.readLine(timeout: 10) }
        for connection in [first, second, third] {
            #expect(try connection?.call("status").code == 0)
        }
        _ = first
        first = nil
        let replacement = try servedConnection(daemon)
        #expect(try replacement.call("status").code == 0)
        // Three open again: the next one is refused again.
        let another = try daemon.connect()
        #expect(try ClientReply(line: another.readLine(timeout: 10)).code == 14)
        #expect(daemon.log.contains("too many connections of one uid"))
    }

    // Answers to a signing or activation-code challenge older than challenge_timeout_seconds
    // (error 11, the challenge gone): ChallengeExpiryTests in StepSignEngineTests, on an injected
    // clock (they slept 11 s each here); StepSignConfigurationTests reads the setting from TOML.

    @Test("a challenge answered within challenge_timeout_seconds is not affected")
    func challengeWithinTimeout() throws {
        let daemon = try DaemonHarness(config: "[server]\nchallenge_timeout_seconds = 10")
        try daemon.addUser()
        let reply = try daemon.connect().signWithPassword(user: "alice", password: Passwords.initial)
        #expect(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100)
    }
}
