import Foundation
import StepSignClient
import Testing

/// `Type=notify` (SPEC §7): the real stepsignd, started with `NOTIFY_SOCKET` pointing at a
/// datagram socket the test bound, tells "systemd" about its life.
@Suite("systemd notifications", .blocking)
struct SystemdNotifyTests {
    /// A daemon whose `NOTIFY_SOCKET` is a fresh socket in its temporary directory, started
    /// without waiting for its socket.
    private static func notifyingDaemon(environment: [String: String] = [:], abstract: Bool = false)
        throws -> (DaemonHarness, NotifySocket) {
        let daemon = try DaemonHarness(start: false)
        let notify = abstract ? try NotifySocket(abstract: ())
            : try NotifySocket(path: daemon.directory.appendingPathComponent("notify.sock").path)
        daemon.environment = environment.merging(["NOTIFY_SOCKET": notify.name]) { $1 }
        try daemon.start(waitForSocket: false)
        return (daemon, notify)
    }

    /// Waits for `READY=1`; fails the test with the daemon's log if it does not come.
    private static func awaitReady(_ notify: NotifySocket, _ daemon: DaemonHarness,
                                   sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
        try #require(notify.receive(until: "READY=1", timeout: 60), "no READY=1:\n\(daemon.log)",
                     sourceLocation: sourceLocation)
    }

    @Test("READY=1 comes once the keys are loaded and the socket answers, with a STATUS line")
    func readyAfterListening() throws {
        let (daemon, notify) = try Self.notifyingDaemon()
        let messages = try Self.awaitReady(notify, daemon)
        // No retry: at the moment READY=1 arrives the socket must already answer.
        let status = try StepSignConnection(socketPath: daemon.socketPath).call("status", timeout: 10)
        #expect(status.code == 0)
        #expect((status.result?["activeKid"]?.stringValue)?.isEmpty == false)
        #expect(messages.count == 1, "nothing before READY=1: \(messages)")
        let ready = NotifySocket.lines(messages.last!)
        #expect(ready.contains { $0.hasPrefix("STATUS=listening on \(daemon.socketPath)") }, "\(ready)")
    }

    @Test("an abstract NOTIFY_SOCKET (@name) gets READY=1 too")
    func abstractSocket() throws {
        let (daemon, notify) = try Self.notifyingDaemon(abstract: true)
        _ = try Self.awaitReady(notify, daemon)
    }

    @Test("SIGHUP: RELOADING=1 with MONOTONIC_USEC, then READY=1 once the configuration is reloaded")
    func reloading() throws {
        let (daemon, notify) = try Self.notifyingDaemon()
        _ = try Self.awaitReady(notify, daemon)
        var before = timespec()
        clock_gettime(CLOCK_MONOTONIC, &before)
        try #require(daemon.process).signal(SIGHUP)
        let messages = try #require(notify.receive(until: "READY=1", timeout: 30), "no READY=1 after SIGHUP:\n\(daemon.log)")
        #expect(messages.count == 2, "\(messages)")
        let reloading = NotifySocket.lines(messages[0])
        #expect(reloading.contains("RELOADING=1"))
        let usec = try #require(reloading.first { $0.hasPrefix("MONOTONIC_USEC=") }.flatMap { UInt64($0.dropFirst(15)) },
                                "\(reloading)")
        let beforeUsec = UInt64(before.tv_sec) * 1_000_000 + UInt64(before.tv_nsec) / 1_000
        #expect(usec >= beforeUsec && usec < beforeUsec + 30_000_000, "CLOCK_MONOTONIC in µs")
        #expect(NotifySocket.lines(messages[1]).contains("STATUS=configuration reloaded"))
        #expect(daemon.log.contains("configuration reloaded"))
    }

    @Test("SIGTERM: STOPPING=1, then a clean exit")
    func stopping() throws {
        let (daemon, notify) = try Self.notifyingDaemon()
        _ = try Self.awaitReady(notify, daemon)
        try #require(daemon.process).signal(SIGTERM)
        let messages = try #require(notify.receive(until: "STOPPING=1", timeout: 30), "no STOPPING=1:\n\(daemon.log)")
        #expect(NotifySocket.lines(messages.last!).contains("STATUS=stopping"))
        #expect(daemon.stop() == 0)
    }

    @Test("WATCHDOG_USEC=200000: WATCHDOG=1 about every 100 ms")
    func watchdog() throws {
        let (daemon, notify) = try Self.notifyingDaemon(environment: ["WATCHDOG_USEC": "200000"])
        _ = try Self.awaitReady(notify, daemon)
        var pings: [Date] = []
        let deadline = Date().addingTimeInterval(10)
        while pings.count < 5, Date() < deadline {
            if let message = notify.receive(timeout: 1), NotifySocket.lines(message).contains("WATCHDOG=1") {
                pings.append(Date())
            }
        }
        try #require(pings.count == 5, "WATCHDOG=1 pings: \(pings.count)\n\(daemon.log)")
        // Half of WATCHDOG_USEC apart; the median, so that one late wake-up on a loaded CI
        // machine does not fail the test.
        let gaps = zip(pings.dropFirst(), pings).map { $0.timeIntervalSince($1) }.sorted()
        #expect(gaps[gaps.count / 2] > 0.05 && gaps[gaps.count / 2] < 0.2, "gaps: \(gaps)")
    }

    @Test("WATCHDOG_PID naming another process: no WATCHDOG=1")
    func watchdogForAnotherProcess() throws {
        let (daemon, notify) = try Self.notifyingDaemon(environment: ["WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"])
        _ = try Self.awaitReady(notify, daemon)
        #expect(notify.receive(timeout: 0.6) == nil)
        _ = daemon
    }
}
