import Foundation
import StepSignProtocol
import StepSignClient
import StepSignCrypto
import StepSignEngine
import StepSignFormat
@testable import StepSignStorage
import Testing

/// SPEC §5.1 against the real daemons, answered the way an attacker would: many connections
/// sending their answers at the same moment, then the right answer after them. Each attack
/// runs on one daemon on SQLite and on two daemons sharing one PostgreSQL database with the
/// connections spread over both (``Deployment``): the limits are the store's, not a daemon's.
@Suite("Concurrent answers", .blocking)
struct ConcurrentAnswersTests {
    /// `count` connections, alternately to A and B, each with `open` answered 0.
    func connections(_ cluster: Cluster, _ count: Int, open: (String, JSONValue)) throws -> [StepSignConnection] {
        try (0..<count).map { index in
            let connection = try cluster.connect(index)
            let reply = try connection.call(open.0, open.1.members ?? [])
            try #require(reply.code == 0, "\(open.0): \(reply.code) \(reply.message)")
            return connection
        }
    }

    /// Writes `line(index)` on every connection before reading any reply, so the daemons have
    /// them all at once; then the replies, in connection order.
    func answerAtOnce(_ connections: [StepSignConnection], _ line: (Int) -> String) throws -> [ClientReply] {
        for (index, connection) in connections.enumerated() {
            try connection.send(Array((line(index) + "\n").utf8))
        }
        return try connections.map { try ClientReply(line: $0.readLine(timeout: 120)) }
    }

    /// The daemons' CPU time so far (user + system), in clock ticks.
    func cpuTicks(_ cluster: Cluster) throws -> Int {
        try cluster.daemons.reduce(0) { total, daemon in
            let pid = try #require(daemon.process?.pid)
            let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
            // Fields after the parenthesised command: state is field 3, utime 14, stime 15.
            let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
            return total + Int(fields[11])! + Int(fields[12])!
        }
    }

    /// The deliveries for alice in all the daemons' outboxes.
    func outboxCount(_ cluster: Cluster) -> Int {
        cluster.daemons.reduce(0) { $0 + $1.outbox().count }
    }

    /// The code delivered with `verificationKey` (deliveries may land in any order), from
    /// whichever daemon's outbox has it.
    func deliveredCode(_ cluster: Cluster, verificationKey: String?) -> String? {
        cluster.daemons.lazy.flatMap { $0.outbox() }
            .first { $0["verificationKey"]?.stringValue == verificationKey }?["activationCode"]?.stringValue
    }

    /// The daemon's log lines about activation codes, and its warnings and errors.
    static func activationLog(_ daemon: DaemonHarness) -> [String] {
        daemon.log.split(separator: "\n").map(String.init).filter {
            $0.contains("activation") || $0.contains("warning") || $0.contains("error")
        }
    }

    static func statuses(_ replies: [ClientReply], of event: String) -> [Int] {
        replies.compactMap { $0.statusCode(of: event) }.sorted()
    }

    /// One scrypt check's CPU in the cluster's daemons, in clock ticks: from three wrong answers
    /// of another user (bob, added here), one after the other.
    func oneCheckTicks(_ cluster: Cluster) throws -> Double {
        try cluster.a.addUser("bob")
        let bob = try cluster.connect(0)
        var bobOpen = Self.signing.1
        bobOpen["user"] = "bob"
        _ = try bob.call(Self.signing.0, bobOpen.members ?? [])
        let calibration = try cpuTicks(cluster)
        for _ in 0..<3 { _ = try bob.setPassword(Passwords.wrong, mode: 12) }
        return max(1, Double(try cpuTicks(cluster) - calibration) / 3)
    }

    static var signing: (String, JSONValue) {
        ("authenticateUserAndSignData", [
            "user": "alice", "payload": "Pay 1,000,000 EUR to mallory", "reason": "r", "authLevel": 1, "authenticatorType": 0,
        ])
    }

    @Test("39 wrong mode-12 answers at once cost about 3 scrypt checks, not 39; the right one after them signs nothing",
          arguments: Deployment.available)
    func signingBurst(deployment: Deployment) throws {
        // The default scrypt cost, so that a check is long enough to see in the daemons' CPU time.
        let cluster = try deployment.start(config: "[password]\nscrypt_n = 32768\nmax_checks_per_uid = 64")
        try cluster.a.addUser()
        let oneCheck = try oneCheckTicks(cluster)

        var all = try connections(cluster, 40, open: Self.signing)
        let last = all.removeLast()
        let before = try cpuTicks(cluster)
        let replies = try answerAtOnce(all) { _ in #"{"id":2,"op":"setPassword","password":"Wrong-Guess-71","challengeMode":12}"# }
        let burst = Double(try cpuTicks(cluster) - before)
        #expect(Self.statuses(replies, of: "getPassword") == [102, 102])
        #expect(Self.statuses(replies, of: "onAuthenticateUserAndSignData") == [Int](repeating: 153, count: 37))
        // Waiting answers poll the store beside the 3 checks (see below); 39 checks would cost 39.
        #expect(burst < oneCheck * 20, "the burst cost \(burst) ticks, one check \(oneCheck)")

        let right = try last.setPassword(Passwords.initial, mode: 12)
        #expect(right.statusCode(of: "onAuthenticateUserAndSignData") == 153)
        for daemon in cluster.daemons {
            #expect(try daemon.connect().call("status").result?["signatures"]?.int == 0)
            #expect(try daemon.userRow()?["blocked"]?.boolValue == true)
        }
    }

    /// The busy user of issue 39: a CI job signing on many connections at once with the right
    /// password. Every answer takes its attempt before its check, so three checks in flight hold
    /// all of `max_attempts = 3`; the others wait for them (SPEC §5.1) instead of being told 153.
    @Test("16 right mode-12 answers of one user at once with max_attempts = 3 all sign; none is told 153, the user is not blocked",
          arguments: Deployment.available)
    func rightAnswersAtOnceAllSign(deployment: Deployment) throws {
        // The default scrypt cost: each check lasts long enough that three are surely in flight.
        let cluster = try deployment.start(config: "[password]\nscrypt_n = 32768\nmax_checks_per_uid = 64")
        try cluster.a.addUser()
        let all = try connections(cluster, 16, open: Self.signing)
        let replies = try answerAtOnce(all) { _ in
            #"{"id":2,"op":"setPassword","password":"\#(Passwords.initial)","challengeMode":12}"#
        }
        #expect(Self.statuses(replies, of: "onAuthenticateUserAndSignData") == [Int](repeating: 100, count: 16),
                "\(replies.map(\.shape))")
        for daemon in cluster.daemons {
            #expect(try daemon.connect().call("status").result?["signatures"]?.int == 16)
            #expect(try daemon.userRow()?["blocked"]?.boolValue == false)
            // Every right answer gave its attempt back: all three are left.
            #expect(try daemon.connect().setUser().int("attemptsLeft", of: "getPassword") == 3)
        }
    }

    /// Every answer that takes its attempt from the user's counter waits alike: logins (mode
    /// 0) and device-key signatures.
    @Test("16 right logins and 16 right device-key signatures of one user at once with max_attempts = 3: all succeed",
          arguments: Deployment.available)
    func rightLoginsAndDeviceSignaturesAtOnce(deployment: Deployment) throws {
        let cluster = try deployment.start(config: "[password]\nscrypt_n = 32768\nmax_checks_per_uid = 64")
        try cluster.a.addUser()
        let logins = try answerAtOnce(try connections(cluster, 16, open: ("setUser", ["user": "alice"]))) { _ in
            #"{"id":2,"op":"setPassword","password":"\#(Passwords.initial)","challengeMode":0}"#
        }
        #expect(logins.filter { $0.eventNames.contains("onUserLoggedIn") }.count == 16, "\(logins.map(\.shape))")

        let device = try TestDevice()
        try cluster.b.connect().adminEnroll(device)
        var opened: [(StepSignConnection, ClientReply)] = []
        for index in 0..<16 {
            let connection = try cluster.connect(index)
            let reply = try connection.requestLevel1(payload: "Build 4711")
            try #require(reply.eventNames == ["getLDASignature"], "\(reply.code) \(reply.message) \(reply.shape)")
            opened.append((connection, reply))
        }
        let answers = try opened.map { try device.answer($0.1) }
        let signed = try answerAtOnce(opened.map(\.0)) { index in
            String(decoding: JSONValue.object([("id", 2), ("op", "setLDASignature")] + answers[index]).jsonBytes, as: UTF8.self)
        }
        #expect(Self.statuses(signed, of: "onAuthenticateUserAndSignData") == [Int](repeating: 100, count: 16),
                "\(signed.map(\.shape))")
        for daemon in cluster.daemons {
            #expect(try daemon.userRow()?["blocked"]?.boolValue == false)
        }
    }

    /// The other side of the wait: answers that wait for checks in flight are not checked
    /// when those checks prove wrong and use the last attempt; they get 153 as before.
    @Test("40 wrong mode-12 answers at once get exactly 3 checks: two 102, then 153 for all the rest; one block, the user blocked",
          arguments: Deployment.available)
    func wrongAnswersAtOnceGetThreeChecks(deployment: Deployment) throws {
        let cluster = try deployment.start(config: "[password]\nscrypt_n = 32768\nmax_checks_per_uid = 64")
        try cluster.a.addUser()
        let oneCheck = try oneCheckTicks(cluster)

        let all = try connections(cluster, 40, open: Self.signing)
        let before = try cpuTicks(cluster)
        let replies = try answerAtOnce(all) { _ in #"{"id":2,"op":"setPassword","password":"Wrong-Guess-71","challengeMode":12}"# }
        let burst = Double(try cpuTicks(cluster) - before)
        #expect(Self.statuses(replies, of: "getPassword") == [102, 102])
        #expect(Self.statuses(replies, of: "onAuthenticateUserAndSignData") == [Int](repeating: 153, count: 38))
        // The answers that wait for the checks in flight poll the store meanwhile (a backoff up
        // to 200 ms), which costs some CPU beside the 3 checks; 40 checks would cost 40.
        #expect(burst < oneCheck * 20, "the burst cost \(burst) ticks, one check \(oneCheck)")
        // Exactly one answer used the last attempt: one userBlocked event of alice's (recorded
        // after its reply).
        func aliceBlocks() throws -> Int {
            try LedgerEventsTests.events(cluster.a).filter { $0.event.kind == .userBlocked && $0.event.user == "alice" }.count
        }
        let deadline = Date().addingTimeInterval(10)
        while try aliceBlocks() == 0, Date() < deadline { usleep(20_000) }
        usleep(300_000)
        #expect(try aliceBlocks() == 1)
        for daemon in cluster.daemons {
            #expect(try daemon.connect().call("status").result?["signatures"]?.int == 0)
            #expect(try daemon.userRow()?["blocked"]?.boolValue == true)
        }
    }

    /// What a daemon killed while it checked an answer leaves behind: the answer's attempt,
    /// reserved. Until the reservation expires, a right answer that would need that attempt
    /// waits `password.check_wait_seconds` for the check, then gets 14 (busy; try again), never
    /// 153, and nothing is blocked.
    @Test("an attempt held by a check that never ends: a right answer waits check_wait_seconds, then error 14")
    func heldAttemptMakesARightAnswerWaitThenBusy() async throws {
        let daemon = try DaemonHarness(config: "[password]\nmax_attempts = 1\ncheck_wait_seconds = 1")
        try daemon.addUser()
        #expect(daemon.stop() == 0)
        let store = try SQLiteStore.open(stateDirectory: daemon.stateDirectory,
                                         seal: try SealKey.stateKey(stateDirectory: daemon.stateDirectory).seal, sealUnsealed: false)
        _ = try await store.reserveAttempt(try ReservationID.random(), name: "alice", maxAttempts: 1, blockSeconds: 0, now: Date())
        try await store.close()
        try daemon.start()

        let connection = try daemon.connect()
        try #require(try connection.call(Self.signing.0, Self.signing.1.members ?? []).code == 0)
        let started = Date()
        let reply = try connection.setPassword(Passwords.initial, mode: 12)
        let waited = Date().timeIntervalSince(started)
        #expect(reply.code == 14, "\(reply.code) \(reply.message) \(reply.shape)")
        #expect(waited >= 1 && waited < 5, "waited \(waited) s")
        #expect(try daemon.connect().call("status").result?["signatures"]?.int == 0)
        #expect(try daemon.userRow()?["blocked"]?.boolValue == false)
    }

    @Test("39 wrong device-key signatures at once take 3 attempts; the right signature after them signs nothing",
          arguments: Deployment.available)
    func deviceKeyBurst(deployment: Deployment) throws {
        let cluster = try deployment.start(config: "[password]\nmax_checks_per_uid = 64")
        try cluster.a.addUser()
        let device = try TestDevice()
        try cluster.b.connect().adminEnroll(device)
        // (1, 0) with a device key enrolled: each session gets its own LDA challenge.
        var opened: [(StepSignConnection, ClientReply)] = []
        for index in 0..<40 {
            let connection = try cluster.connect(index)
            let reply = try connection.requestLevel1(payload: "Pay 1,000,000 EUR to mallory")
            try #require(reply.eventNames == ["getLDASignature"], "\(reply.code) \(reply.message) \(reply.shape)")
            opened.append((connection, reply))
        }
        let (last, lastChallenge) = opened.removeLast()
        let bogus = Base64URL.encode([UInt8](repeating: 7, count: 64))
        let replies = try answerAtOnce(opened.map(\.0)) { _ in
            #"{"id":2,"op":"setLDASignature","deviceKeyId":"\#(device.kid)","signature":"\#(bogus)"}"#
        }
        #expect(Self.statuses(replies, of: "getLDASignature") == [102, 102])
        #expect(Self.statuses(replies, of: "onAuthenticateUserAndSignData") == [Int](repeating: 153, count: 37))
        let right = try last.answer(lastChallenge, with: device)
        #expect(right.statusCode(of: "onAuthenticateUserAndSignData") == 153, "\(right.shape)")
        for daemon in cluster.daemons {
            #expect(try daemon.connect().call("status").result?["signatures"]?.int == 0)
        }
    }

    @Test("a name that is not a user answers a burst exactly as a user does, and its counter survives a restart",
          arguments: Deployment.available)
    func unknownNameBurst(deployment: Deployment) throws {
        let cluster = try deployment.start(config: "[password]\nmax_checks_per_uid = 64\nblock_seconds = 600")
        try cluster.a.addUser()
        func burst(_ user: String) throws -> [[String]] {
            var open = Self.signing.1
            open["user"] = .string(user)
            let replies = try answerAtOnce(try connections(cluster, 12, open: (Self.signing.0, open))) { _ in
                #"{"id":2,"op":"setPassword","password":"Wrong-Guess-71","challengeMode":12}"#
            }
            return replies.map(\.shape).sorted { $0.joined() < $1.joined() }
        }
        #expect(try burst("alice") == burst("nobody"))
        try cluster.restart()
        for daemon in cluster.daemons {
            let alice = try daemon.connect().setUser("alice")
            let nobody = try daemon.connect().setUser("nobody")
            #expect(alice.statusCode(of: "getPassword") == 153)
            #expect(alice.shape == nobody.shape)
        }
    }

    @Test("19 wrong activation codes at once get 3 checks; the right code after them is not accepted",
          arguments: Deployment.available)
    func activationCodeBurst(deployment: Deployment) throws {
        let cluster = try deployment.start(config: "[forgot_password]\nmax_codes_per_hour = 100\n[password]\nmax_checks_per_uid = 64")
        try cluster.a.addUser()
        var sessions: [StepSignConnection] = []
        var verificationKey: String?
        for index in 0..<20 {
            let connection = try cluster.connect(index)
            _ = try connection.setUser()
            let sent = try connection.call("forgotPassword", ["user": "alice"])
            try #require(sent.eventNames == ["getActivationCode"], "\(sent.code) \(sent.message)")
            verificationKey = sent.string("verificationKey", of: "getActivationCode")
            sessions.append(connection)
        }
        let last = sessions.removeLast()
        // The code the last forgotPassword made (each new code replaces the one before).
        let deadline = Date().addingTimeInterval(10)
        while outboxCount(cluster) < 20, Date() < deadline { usleep(10_000) }
        let right = try #require(deliveredCode(cluster, verificationKey: verificationKey))
        let replies = try answerAtOnce(sessions) { _ in #"{"id":3,"op":"setActivationCode","activationCode":"00000000"}"# }
        #expect(Self.statuses(replies, of: "getActivationCode") == [106, 106] + [Int](repeating: 153, count: 17))
        let late = try last.call("setActivationCode", ["activationCode": right])
        #expect(late.statusCode(of: "getActivationCode") == 153)
        #expect(!late.eventNames.contains("getPassword"))
    }

    @Test("the right activation code sent by 10 sessions at once is accepted once", arguments: Deployment.available)
    func activationCodeRace(deployment: Deployment) throws {
        let cluster = try deployment.start(config: "[forgot_password]\nmax_codes_per_hour = 100\n[password]\nmax_checks_per_uid = 64")
        try cluster.a.addUser()
        var sessions: [StepSignConnection] = []
        var verificationKey: String?
        for index in 0..<10 {
            let connection = try cluster.connect(index)
            _ = try connection.setUser()
            let sent = try connection.call("forgotPassword", ["user": "alice"])
            try #require(sent.eventNames == ["getActivationCode"], "\(sent.code) \(sent.message)")
            verificationKey = sent.string("verificationKey", of: "getActivationCode")
            sessions.append(connection)
        }
        // The code the last forgotPassword made: the one in force for every session.
        let deadline = Date().addingTimeInterval(10)
        while outboxCount(cluster) < 10, Date() < deadline { usleep(10_000) }
        let right = try #require(deliveredCode(cluster, verificationKey: verificationKey))
        let replies = try answerAtOnce(sessions) { _ in #"{"id":3,"op":"setActivationCode","activationCode":"\#(right)"}"# }
        // The winner goes on to set a new password (Path B, mode 1); every other session's
        // answer finds the code used and counts as a wrong one.
        let accepted = replies.filter { $0.event("getPassword")?["challengeMode"]?.int == 1 }
        let refused = Self.statuses(replies, of: "getActivationCode")
        // Seen failing once in a full local run (no session accepted, not 9 refused) and never
        // since: a failure says what each session was told and what the daemons logged.
        let why = "\(replies.map(\.shape)); \(cluster.daemons.map { Self.activationLog($0) })"
        #expect(accepted.count == 1, "\(why)")
        #expect(refused.count == 9 && refused.allSatisfy { $0 == 106 || $0 == 153 }, "\(why)")
    }

    @Test("forgotPassword and resendActivationCode: max_codes_per_hour codes per user, then error 14; no more are delivered",
          arguments: Deployment.available)
    func codeFlood(deployment: Deployment) throws {
        let cluster = try deployment.start()  // max_codes_per_hour = 5
        try cluster.a.addUser()
        // One session on A and one on B, each with a code sent; then resends from both in turn.
        let sessions = try (0..<2).map { index in
            let connection = try cluster.connect(index)
            _ = try connection.setUser()
            try #require(try connection.call("forgotPassword", ["user": "alice"]).code == 0)
            return connection
        }
        var codes: [Int] = []
        for index in 0..<50 { codes.append(try sessions[index % 2].call("resendActivationCode").code) }
        #expect(codes.filter { $0 == 0 }.count == 3, "\(codes)")
        #expect(codes.filter { $0 == 14 }.count == 47, "\(codes)")
        let deadline = Date().addingTimeInterval(10)
        while outboxCount(cluster) < 5, Date() < deadline { usleep(10_000) }
        usleep(300_000)
        #expect(outboxCount(cluster) == 5)
        // Another session, on either daemon, does not get around it: the budget is the user's.
        for index in 0..<2 {
            let other = try cluster.connect(index)
            _ = try other.setUser()
            #expect(try other.call("forgotPassword", ["user": "alice"]).code == 14)
        }
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
