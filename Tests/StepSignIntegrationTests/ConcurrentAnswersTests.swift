import Foundation
import StepSignClient
import Testing

/// SPEC §5.1 against the real daemon, answered the way an attacker would: many connections
/// sending their answers at the same moment, then the right answer after them.
@Suite("Concurrent answers")
struct ConcurrentAnswersTests {
    /// `count` connections, each with `open` answered 0.
    func connections(_ daemon: DaemonHarness, _ count: Int, open: (String, [String: Any])) throws -> [StepSignConnection] {
        try (0..<count).map { _ in
            let connection = try daemon.connect()
            let reply = try connection.call(open.0, open.1)
            try #require(reply.code == 0, "\(open.0): \(reply.code) \(reply.message)")
            return connection
        }
    }

    /// Writes `line(index)` on every connection before reading any reply, so the daemon has
    /// them all at once; then the replies, in connection order.
    func answerAtOnce(_ connections: [StepSignConnection], _ line: (Int) -> String) throws -> [ClientReply] {
        for (index, connection) in connections.enumerated() {
            try connection.send(Array((line(index) + "\n").utf8))
        }
        return try connections.map { try ClientReply(line: $0.readLine(timeout: 120)) }
    }

    /// The daemon's CPU time so far (user + system), in clock ticks.
    func cpuTicks(_ daemon: DaemonHarness) throws -> Int {
        let pid = try #require(daemon.process?.pid)
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // Fields after the parenthesised command: state is field 3, utime 14, stime 15.
        let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
        return Int(fields[11])! + Int(fields[12])!
    }

    static func statuses(_ replies: [ClientReply], of event: String) -> [Int] {
        replies.compactMap { $0.statusCode(of: event) }.sorted()
    }

    static var signing: (String, [String: Any]) {
        ("authenticateUserAndSignData", [
            "user": "alice", "payload": "Pay 1,000,000 EUR to mallory", "reason": "r", "authLevel": 1, "authenticatorType": 0,
        ])
    }

    @Test("39 wrong mode-12 answers at once cost about 3 scrypt checks, not 39; the right one after them signs nothing")
    func signingBurst() throws {
        // The default scrypt cost, so that a check is long enough to see in the daemon's CPU time.
        let daemon = try DaemonHarness(config: "[password]\nscrypt_n = 32768\nmax_checks_per_uid = 64")
        try daemon.addUser()
        try daemon.addUser("bob")
        // One check's CPU, from three wrong answers of another user one after the other.
        let bob = try daemon.connect()
        var bobOpen = Self.signing.1
        bobOpen["user"] = "bob"
        _ = try bob.call(Self.signing.0, bobOpen)
        let calibration = try cpuTicks(daemon)
        for _ in 0..<3 { _ = try bob.setPassword(Passwords.wrong, mode: 12) }
        let oneCheck = max(1, Double(try cpuTicks(daemon) - calibration) / 3)

        var all = try connections(daemon, 40, open: Self.signing)
        let last = all.removeLast()
        let before = try cpuTicks(daemon)
        let replies = try answerAtOnce(all) { _ in #"{"id":2,"op":"setPassword","password":"Wrong-Guess-71","challengeMode":12}"# }
        let burst = Double(try cpuTicks(daemon) - before)
        #expect(Self.statuses(replies, of: "getPassword") == [102, 102])
        #expect(Self.statuses(replies, of: "onAuthenticateUserAndSignData") == [Int](repeating: 153, count: 37))
        #expect(burst < oneCheck * 10, "the burst cost \(burst) ticks, one check \(oneCheck)")

        let right = try last.setPassword(Passwords.initial, mode: 12)
        #expect(right.statusCode(of: "onAuthenticateUserAndSignData") == 153)
        #expect(try daemon.connect().call("status").result?["signatures"] as? Int == 0)
        #expect(try daemon.userRow()?["blocked"] as? Bool == true)
    }

    @Test("a name that is not a user answers a burst exactly as a user does, and its counter survives a restart")
    func unknownNameBurst() throws {
        let daemon = try DaemonHarness(config: "[password]\nmax_checks_per_uid = 64\nblock_seconds = 600")
        try daemon.addUser()
        func burst(_ user: String) throws -> [[String]] {
            var open = Self.signing.1
            open["user"] = user
            let replies = try answerAtOnce(try connections(daemon, 12, open: (Self.signing.0, open))) { _ in
                #"{"id":2,"op":"setPassword","password":"Wrong-Guess-71","challengeMode":12}"#
            }
            return replies.map(\.shape).sorted { $0.joined() < $1.joined() }
        }
        #expect(try burst("alice") == burst("nobody"))
        daemon.stop()
        try daemon.start()
        let alice = try daemon.connect().setUser("alice")
        let nobody = try daemon.connect().setUser("nobody")
        #expect(alice.statusCode(of: "getPassword") == 153)
        #expect(alice.shape == nobody.shape)
    }

    @Test("19 wrong activation codes at once get 3 checks; the right code after them is not accepted")
    func activationCodeBurst() throws {
        let daemon = try DaemonHarness(config: "[forgot_password]\nmax_codes_per_hour = 100\n[password]\nmax_checks_per_uid = 64")
        try daemon.addUser()
        var sessions: [StepSignConnection] = []
        for _ in 0..<20 {
            let connection = try daemon.connect()
            _ = try connection.setUser()
            let sent = try connection.call("forgotPassword", ["user": "alice"])
            try #require(sent.eventNames == ["getActivationCode"], "\(sent.code) \(sent.message)")
            sessions.append(connection)
        }
        let last = sessions.removeLast()
        // The code the last forgotPassword made (each new code replaces the one before).
        let deadline = Date().addingTimeInterval(10)
        while daemon.outbox().count < 20, Date() < deadline { usleep(10_000) }
        let right = try #require(daemon.outbox().last?["activationCode"] as? String)
        let replies = try answerAtOnce(sessions) { _ in #"{"id":3,"op":"setActivationCode","activationCode":"00000000"}"# }
        #expect(Self.statuses(replies, of: "getActivationCode") == [106, 106] + [Int](repeating: 153, count: 17))
        let late = try last.call("setActivationCode", ["activationCode": right])
        #expect(late.statusCode(of: "getActivationCode") == 153)
        #expect(!late.eventNames.contains("getPassword"))
    }

    @Test("forgotPassword and resendActivationCode: max_codes_per_hour codes per user, then error 14; no more are delivered")
    func codeFlood() throws {
        let daemon = try DaemonHarness()  // max_codes_per_hour = 5
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.setUser()
        #expect(try connection.call("forgotPassword", ["user": "alice"]).code == 0)
        var codes: [Int] = []
        for _ in 0..<50 { codes.append(try connection.call("resendActivationCode").code) }
        #expect(codes.filter { $0 == 0 }.count == 4)
        #expect(codes.filter { $0 == 14 }.count == 46)
        let deadline = Date().addingTimeInterval(10)
        while daemon.outbox().count < 5, Date() < deadline { usleep(10_000) }
        usleep(300_000)
        #expect(daemon.outbox().count == 5)
        // Another session does not get around it: the budget is the user's.
        let other = try daemon.connect()
        _ = try other.setUser()
        #expect(try other.call("forgotPassword", ["user": "alice"]).code == 14)
    }

    @Test("a failing notifier changes neither the reply nor its shape: the caller cannot tell a user from another name")
    func failingNotifierIsInvisible() throws {
        let daemon = try DaemonHarness(config: "[forgot_password]\nnotifier = [\"/bin/false\"]")
        try daemon.addUser()
        func forgot(_ user: String) throws -> [String] {
            let connection = try daemon.connect()
            _ = try connection.setUser(user)
            return try connection.call("forgotPassword", ["user": user]).shape
        }
        #expect(try forgot("alice") == forgot("nobody"))
        #expect(try forgot("alice") == ["code 0", "getActivationCode mode -1 attempts 3 status 100 forgot -"])
        let deadline = Date().addingTimeInterval(10)
        while !daemon.log.contains("activation code delivery failed"), Date() < deadline { usleep(20_000) }
        #expect(daemon.log.contains("activation code delivery failed"))
    }
}
