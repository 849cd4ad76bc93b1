#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StepSignClient
import Testing

/// Hostile clients rather than hostile lines: disconnects mid-request, a thousand connections,
/// slow senders, a client that never reads, idle sessions. The daemon must keep serving others.
@Suite("Bad input: hostile clients", .blocking)
struct HostileClientTests {
    private func levelZero(_ payload: String) -> String {
        #"{"id":"s","op":"authenticateUserAndSignData","user":"alice","payload":"\#(payload)","reason":"hostile","authLevel":0,"authenticatorType":0}"#
    }

    private func signatures(_ daemon: DaemonHarness) throws -> Int {
        try daemon.connect().call("status").result?["signatures"]?.int ?? -1
    }

    @Test("clients that disconnect mid-line, mid-pipeline or before their signing reply do not disturb the daemon")
    func disconnects() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let control = try daemon.connect()
        let before = try signatures(daemon)

        // Half a line, then gone.
        do {
            let client = try RawClient(socketPath: daemon.socketPath)
            try client.send(#"{"id":1,"op":"authenticateUserAndSign"#)
        }
        // A right password sent, the connection closed before the reply.
        do {
            let client = try RawClient(socketPath: daemon.socketPath)
            #expect(try client.call(#"{"id":1,"op":"authenticateUserAndSignData","user":"alice","payload":"p","reason":"r","authLevel":1,"authenticatorType":0}"#).code == 0)
            try client.send(#"{"id":2,"op":"setPassword","password":"Tr1cky-Pelican-42","challengeMode":12}"# + "\n")
        }
        // 100 pipelined level-0 signings, the connection reset at once.
        do {
            let client = try RawClient(socketPath: daemon.socketPath)
            try client.send((0..<100).map { levelZero("p\($0)") + "\n" }.joined())
            var linger = linger(l_onoff: 1, l_linger: 0)
            setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        }
        #expect(try control.call("status").code == 0)
        // Whatever was signed for the vanished clients is in the ledger, and the chain holds.
        // Polled until the daemon has finished the vanished connection's requests (the count
        // holds still around an audit), not slept on.
        var audit = try control.call("admin.auditVerify")
        var after = try signatures(daemon)
        let quiet = Date().addingTimeInterval(30)
        while Date() < quiet {
            let first = try signatures(daemon)
            audit = try control.call("admin.auditVerify")
            let entries = try daemon.ledgerEntries().count
            after = try signatures(daemon)
            if first == after, audit.result?["entries"]?.int == entries { break }
        }
        #expect(after >= before && after <= before + 101)
        #expect(audit.result?["ok"]?.boolValue == true)
        #expect(audit.result?["entries"]?.int == (try daemon.ledgerEntries().count))
        #expect(try control.call("authenticateUserAndSignData", ["user": "alice", "payload": "p", "reason": "r", "authLevel": 0, "authenticatorType": 0]).code == 0)
    }

    @Test("1000 simultaneous connections are all served; one more past max_connections gets 14 and is closed")
    func thousandConnections() throws {
        let limit = raiseOpenFileLimit(to: 4096)
        try #require(limit >= 2200, "RLIMIT_NOFILE too low: \(limit)")
        let daemon = try DaemonHarness(config: "[server]\nmax_connections = 1001\nmax_connections_per_uid = 1001")
        let control = try daemon.connect()  // 1 open
        var clients: [RawClient] = []
        for _ in 0..<1000 { clients.append(try RawClient(socketPath: daemon.socketPath)) }  // 1001 open
        for (index, client) in clients.enumerated() { try client.send(#"{"id":\#(index),"op":"status"}"# + "\n") }
        var served = 0
        for (index, client) in clients.enumerated() {
            let reply = try client.reply(timeout: 60)
            if reply.code == 0, reply.id.int == index { served += 1 }
        }
        #expect(served == 1000)
        let extra = try RawClient(socketPath: daemon.socketPath)
        let refused = try extra.reply()
        #expect(refused.code == 14)
        #expect(extra.next(timeout: 10) == .closed)
        #expect(try control.call("status").code == 0)
        clients.removeAll()
        // Slots free up once those close: a new connection is served (polled, not slept on).
        let deadline = Date().addingTimeInterval(10)
        var freed = false
        while !freed, Date() < deadline {
            freed = (try? daemon.connect().call("status").code) == 0
            if !freed { usleep(20_000) }
        }
        #expect(freed)
    }

    @Test("a request dribbled byte by byte is answered, and other clients are served meanwhile")
    func slowSender() throws {
        let daemon = try DaemonHarness()
        let control = try daemon.connect()
        // Fifty slow-loris connections holding half a request each.
        var loris: [RawClient] = []
        for index in 0..<50 {
            let client = try RawClient(socketPath: daemon.socketPath)
            try client.send(#"{"id":\#(index),"op":"sta"#)
            loris.append(client)
        }
        let slow = try RawClient(socketPath: daemon.socketPath)
        let request = Array((levelZero("dribbled") + "\n").utf8)
        for (offset, byte) in request.enumerated() {
            try slow.send([byte])
            usleep(2_000)
            if offset % 40 == 0 { #expect(try control.call("status").code == 0) }
        }
        let reply = try slow.reply()
        #expect(reply.code == 0)
        #expect(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        // The slow-loris connections finish their requests late and are still answered.
        for client in loris { try client.send(#"tus"}"# + "\n") }
        for client in loris { #expect(try client.reply().code == 0) }
    }

    @Test("a client that pipelines without reading its replies does not stall the others, and the daemon stops reading it")
    func clientThatNeverReads() throws {
        let daemon = try DaemonHarness()
        let greedy = try RawClient(socketPath: daemon.socketPath)
        var flags = fcntl(greedy.fd, F_GETFL)
        flags |= O_NONBLOCK
        _ = fcntl(greedy.fd, F_SETFL, flags)
        // Stuff the socket until the kernel says no: the daemon's replies back up behind it,
        // and once they fill what a connection may hold the daemon reads no more of it (the
        // memory a peer can make the daemon hold is bounded). Whether the daemon still reads
        // is what the kernel holds of ours unread (TIOCOUTQ): a daemon that kept reading would
        // drain it, however slowly, and take all it is sent until the deadline. The requests
        // are cheap ones (error 4), so a daemon that reads drains them fast.
        let chunk = Array(String(repeating: #"{"id":1,"op":"noSuchOperation"}"# + "\n", count: 200).utf8)
        func unread() -> Int32 {
            var queued: Int32 = 0
            _ = ioctl(greedy.fd, UInt(TIOCOUTQ), &queued)
            return queued
        }
        var sent = 0
        var stoppedReading = false
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline, !stoppedReading {
            let written = chunk.withUnsafeBytes { send(greedy.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written > 0 {
                sent += written
                continue
            }
            guard written < 0, errno == EAGAIN || errno == EWOULDBLOCK else { break }
            let before = unread()
            usleep(1_000_000)
            stoppedReading = before > 0 && unread() == before
        }
        #expect(sent > 0)
        #expect(stoppedReading, "the daemon kept reading a client that reads none of its replies (\(sent) bytes sent)")
        let other = try daemon.connect()
        for _ in 0..<20 { #expect(try other.call("status", timeout: 10).code == 0) }
        #expect(try other.call("authenticateUserAndSignData", ["user": "alice", "payload": "p", "reason": "r", "authLevel": 0, "authenticatorType": 0]).code == 0)
    }

    @Test("a session idle past idle_timeout_seconds is sent error 5 (id null) and closed; a late answer finds no challenge")
    func idleSession() throws {
        let daemon = try DaemonHarness(config: "[server]\nidle_timeout_seconds = 1")
        try daemon.addUser()
        let client = try RawClient(socketPath: daemon.socketPath)
        #expect(try client.call(#"{"id":1,"op":"authenticateUserAndSignData","user":"alice","payload":"p","reason":"r","authLevel":1,"authenticatorType":0}"#).code == 0)
        let expired = try client.reply(timeout: 10)
        #expect(expired.code == 5)
        #expect(expired.id == .null)
        #expect(client.next(timeout: 10) == .closed)
        // The challenge went with the session: answering it on a new connection is error 11.
        let next = try RawClient(socketPath: daemon.socketPath)
        #expect(try next.call(#"{"id":3,"op":"setPassword","password":"Tr1cky-Pelican-42","challengeMode":12}"#).code == 11)
    }

    @Test("an admin operation from a peer that is not an admin is error 13; the connection stays")
    func notAdmin() throws {
        let daemon = try DaemonHarness(config: "[access]\nadmin_uids = []")
        let client = try RawClient(socketPath: daemon.socketPath)
        for op in ["admin.listUsers", "admin.rotateKey", "admin.exportLedger", "admin.addUser"] {
            #expect(try client.call(#"{"id":1,"op":"\#(op)"}"#).code == 13, "\(op)")
        }
        #expect(try client.call(#"{"id":2,"op":"status"}"#).code == 0)
    }
}
