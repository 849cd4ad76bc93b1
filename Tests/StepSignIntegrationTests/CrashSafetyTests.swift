#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StepSignClient
import StepSignStorage
import StepSignTestSupport
import Synchronization
import Testing

/// SIGKILL under load, restart, repeat (SPEC §5: a signature is returned only after its ledger
/// row is durably committed; counters are stored).
///
/// Each round starts load on several connections — pipelined level-0 signings, level-1
/// password signings and batches, wrong step-up passwords for a user of the round, key rotations —,
/// waits until each kind has had a success acknowledged, kills the daemon with SIGKILL at a
/// random moment after that, checks the files with the daemon down, restarts it and checks
/// what is provable (every load thread got what it asked for until the kill took its connection):
/// - every signature acknowledged (status 100 received before the kill) is in the ledger with
///   the very JWS the client got, and `getSignature` as admin finds it;
/// - the ledger verifies (`admin.auditVerify`) and `status.signatures` equals its length;
/// - every batch in the ledger is whole: all its items, next to each other (SPEC §3.4), and a
///   batch acknowledged is there with every signature the client got;
/// - a user's stored failures lie between the failures acknowledged (a 102 received) and those
///   plus the one answer in flight at the kill; earlier rounds' users keep their counts exactly;
///   the user with only right answers has all attempts left but those in flight at the kills
///   whose reservations have not expired yet (one per kill);
/// - every acknowledged rotation's key is listed and loads (the daemon starts: key files parse,
///   no leftover *.tmp stops it), and SQLite's own integrity check passes on the killed files.
///
/// Rounds: `STEPSIGN_CRASH_ROUNDS` (default 10; `scripts/crash-soak` runs 50).
@Suite("Crash safety", .blocking)
struct CrashSafetyTests {
    static let maxAttempts = 100

    @Test("SIGKILL under concurrent signing load loses nothing acknowledged and half-writes nothing")
    func killUnderLoad() throws {
        let rounds = Int(ProcessInfo.processInfo.environment["STEPSIGN_CRASH_ROUNDS"] ?? "") ?? 10
        // A log checkpoint every 3 entries (SPEC §5.5): a kill often falls between one signed
        // in a batch's transaction and the commit, or between the commit and its being kept.
        let daemon = try DaemonHarness(config: "[password]\nmax_attempts = \(Self.maxAttempts)\nblock_seconds = 0\n[ledger]\ncheckpoint_entries = 3")
        try daemon.addUser()
        try daemon.addUser(Load.batchUser)
        let ledger = Acknowledged()
        var failuresSoFar: [String: Int] = [:]   // per wrong-password user, as observed after a restart
        var kidsSoFar: Set<String> = []
        var generator = SystemRandomNumberGenerator()
        var verifiedCount = 0           // ledger entries checked so far
        var anchorHash = ""             // entryHash of the last one
        var acknowledgedTotal = 0
        var pendingSettled = 0          // rounds whose kill left a log checkpoint pending
        var total = Load.Done()         // what the load got acknowledged, over all rounds
        var kills: [Date] = []          // when each kill happened

        for round in 1...rounds {
            let mallory = "mallory\(round)"
            try daemon.addUser(mallory)
            let load = Load(socketPath: daemon.socketPath, mallory: mallory, ledger: ledger)
            load.start()
            // Every kind of load got through once before the kill, so the checks below have
            // signatures, batches, counters and keys to check.
            #expect(load.waitForEveryKind(), "round \(round): not every kind of load got through: \(load.acknowledged), \(load.unexpected)")
            usleep(UInt32.random(in: 0...500_000, using: &generator))
            let status = daemon.stop(signal: SIGKILL)
            kills.append(Date())
            #expect(status == 128 + SIGKILL, "round \(round): the daemon was killed (\(status))")
            load.join()
            // Every thread got what it asked for until the kill took its connection.
            #expect(load.unexpected.isEmpty, "round \(round): \(load.unexpected)")
            let done = load.acknowledged
            total.add(done)

            // With the daemon down: SQLite's own check on the files as the kill left them.
            if try checkFilesAtRest(daemon, round: round) { pendingSettled += 1 }

            try daemon.start()
            let admin = try daemon.connect()

            // Every signature acknowledged since the last check is in the ledger, with the JWS the
            // client got. Earlier ones were checked in earlier rounds; the anchor (the last entry
            // checked keeps its hash) and the hash chain pin everything before it.
            let fresh = try exportLedger(admin, afterSeq: max(0, verifiedCount - 1))
            if verifiedCount > 0 {
                #expect(fresh.first?.seq == verifiedCount && fresh.first?.entryHash == anchorHash,
                        "round \(round): the last entry checked before is unchanged")
            }
            let newEntries = fresh.filter { $0.seq > verifiedCount }
            let bySignatureID = Dictionary(newEntries.map { ($0.id, $0.jws) }, uniquingKeysWith: { first, _ in first })
            #expect(bySignatureID.count == newEntries.count, "round \(round): signature IDs are unique in the ledger")
            let acknowledged = ledger.drain()
            let missing = acknowledged.filter { bySignatureID[$0.key] != $0.value }
            #expect(missing.isEmpty, "round \(round): \(missing.count) acknowledged signatures not in the ledger as sent: \(missing.keys.prefix(3))")
            let batches = BatchCompleteness.check(newEntries.map { .init(seq: $0.seq, jws: $0.jws) })
            #expect(batches.broken.isEmpty, "round \(round): batches not whole: \(batches.broken.prefix(3))")
            acknowledgedTotal += acknowledged.count
            verifiedCount = fresh.last?.seq ?? verifiedCount
            anchorHash = fresh.last?.entryHash ?? anchorHash
            for id in load.signatureIDs.prefix(5) {
                let row = try admin.call("getSignature", ["signatureID": id])
                #expect(row.code == 0 && row.result?["signatureID"]?.stringValue == id, "round \(round): getSignature \(id)")
            }
            let audit = try admin.call("admin.auditVerify")
            #expect(audit.result?["ok"]?.boolValue == true, "round \(round): audit \(audit.object)")
            // The checkpoint kept across the kill is one the log extends: no refusal, and no
            // pending checkpoint left behind.
            let logProblem = try admin.call("status").result?["logProblem"]
            #expect(logProblem == nil || logProblem == .null, "round \(round): \(logProblem.map { "\($0)" } ?? "")")
            #expect(!FileManager.default.fileExists(atPath: daemon.stateDirectory + "/keys/log-checkpoint.pending"))
            #expect(audit.result?["entries"]?.int == verifiedCount)
            // `signatures` counts signatures; the restarts' events (SPEC §5.4) are entries too.
            #expect(try admin.call("status").result?["signatures"]?.int == verifiedCount - (try daemon.ledgerEventCount()))

            // Counters: acknowledged failures ≤ stored ≤ acknowledged + the one in flight.
            let stored = Self.maxAttempts - (try attemptsLeft(admin, user: mallory))
            let (acked, inFlight) = load.failures
            #expect(stored >= acked && stored <= acked + inFlight,
                    "round \(round): \(mallory) has \(stored) failures stored, \(acked) acknowledged, \(inFlight) in flight")
            for (user, count) in failuresSoFar {
                #expect(Self.maxAttempts - (try attemptsLeft(admin, user: user)) == count, "\(user) kept its count")
            }
            failuresSoFar[mallory] = stored
            print("crash round \(round): \(done) acknowledged, \(batches.whole) batches whole in the ledger, ledger \(verifiedCount), "
                  + "\(mallory) failures stored \(stored) (acknowledged \(acked), in flight \(inFlight))")
            // Alice only answers right, but an answer's attempt is taken before it is checked
            // (SPEC §5.1), so the one in flight at a kill stays taken until its reservation
            // expires (a right answer keeps the attempts held by answers in flight): at most one
            // per kill of the last `AttemptReservation.lifetime`, never more.
            let recentKills = kills.filter { $0 > Date().addingTimeInterval(-AttemptReservation.lifetime) }.count
            #expect(Self.maxAttempts - (try attemptsLeft(admin, user: DaemonHarness.user)) <= recentKills, "alice never failed")
            let users = try admin.call("admin.listUsers").result?["users"]?.arrayValue ?? []
            #expect(users.count == round + 2, "round \(round): every user added is there")
            #expect(users.allSatisfy { $0["blocked"]?.boolValue == false })

            // Keys: every acknowledged rotation is listed, exactly one key is active.
            let keys = try admin.call("admin.listKeys").result?["keys"]?.arrayValue ?? []
            let kids = Set(keys.compactMap { $0["kid"]?.stringValue })
            kidsSoFar.formUnion(load.rotatedKids)
            #expect(kidsSoFar.isSubset(of: kids), "round \(round): acknowledged rotations are listed")
            #expect(keys.filter { $0["active"]?.boolValue == true }.count == 1)

            // And the restarted daemon signs.
            let signed = try admin.call("authenticateUserAndSignData", [
                "user": "alice", "payload": "after round \(round)", "reason": "crash test", "authLevel": 0, "authenticatorType": 0,
            ])
            #expect(signed.statusCode(of: "onAuthenticateUserAndSignData") == 100)
            if let details = signed.event("onAuthenticateUserAndSignData")?["details"],
               let id = details["dataSignatureID"]?.stringValue, let jws = details["payloadSignature"]?.stringValue {
                ledger.add(id: id, jws: jws)
            }
        }
        #expect(acknowledgedTotal + ledger.drain().count > rounds, "the load signed something")
        print("crash rounds: \(total) acknowledged in all")
        print("crash rounds: \(pendingSettled) of \(rounds) kills left a log checkpoint pending, settled at the start")
        #expect(daemon.stop() == 0)
    }

    struct LedgerRow {
        var seq: Int
        var id: String
        var jws: String
        var entryHash: String
    }

    /// The ledger after `afterSeq` through `admin.exportLedger`.
    private func exportLedger(_ admin: StepSignConnection, afterSeq: Int) throws -> [LedgerRow] {
        var out: [LedgerRow] = []
        var after = afterSeq
        while true {
            let reply = try admin.call("admin.exportLedger", ["afterSeq": after, "limit": 10_000])
            let entries = reply.result?["entries"]?.arrayValue ?? []
            for entry in entries {
                out.append(LedgerRow(seq: entry["seq"]?.int ?? -1, id: entry["signatureID"]?.stringValue ?? "",
                                     jws: entry["payloadSignature"]?.stringValue ?? "", entryHash: entry["entryHash"]?.stringValue ?? ""))
                after = entry["seq"]?.int ?? after
            }
            if entries.count < 10_000 { return out }
        }
    }

    /// `attemptsLeft` of a level-1 challenge for `user` (opening one counts nothing), then cancelled.
    private func attemptsLeft(_ connection: StepSignConnection, user: String) throws -> Int {
        let reply = try connection.call("authenticateUserAndSignData", [
            "user": user, "payload": "probe", "reason": "probe", "authLevel": 1, "authenticatorType": 0,
        ])
        _ = try connection.call("resetAuthenticateUserAndSignDataState")
        return reply.int("attemptsLeft", of: "getPassword") ?? -1
    }

    /// The state directory as SIGKILL left it: the database passes `PRAGMA integrity_check`
    /// (WAL included), every key file is a PEM private key, no temporary file is left over.
    /// Returns whether the kill left a log checkpoint pending.
    private func checkFilesAtRest(_ daemon: DaemonHarness, round: Int) throws -> Bool {
        var pendingLeft = false
        let database = daemon.stateDirectory + "/stepsign.sqlite"
        let check = try Tools.python("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            print(db.execute("PRAGMA integrity_check").fetchone()[0])
            """, database)
        #expect(check.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "ok", "round \(round): \(check.stdout)\(check.stderr)")
        let keys = daemon.stateDirectory + "/keys"
        for name in try FileManager.default.contentsOfDirectory(atPath: keys) {
            if name.hasSuffix(".tmp") {
                // A rotation killed between write and rename: tolerated (the next start must ignore it).
                continue
            }
            let text = try String(contentsOfFile: keys + "/" + name, encoding: .utf8)
            if name == "log-checkpoint" || name == "log-checkpoint.pending" {
                // The last checkpoint the daemon signed (SPEC §5.5), and one a kill left signed in
                // a batch's transaction (settled at the start): each a whole signed note.
                #expect(text.hasSuffix("\n") && text.contains("\n\n\u{2014} "), "round \(round): \(name) is whole")
                if name.hasSuffix(".pending") { pendingLeft = true }
                continue
            }
            if name == "log-checkpoint.head" {
                // The hash of the entry at a kept checkpoint's size (SPEC §5.5): one line, size and hex.
                let parts = text.split(separator: " ")
                #expect(parts.count == 2 && Int64(parts[0]) != nil && parts[1].count == 65 && text.hasSuffix("\n"),
                        "round \(round): log-checkpoint.head is whole")
                continue
            }
            if name == "seal.key" {
                // The seal key of the credential records (SPEC §5.4): one line of base64url, 32 bytes.
                #expect(text.count == 44 && text.hasSuffix("\n"), "round \(round): seal.key is whole")
                continue
            }
            #expect(text.hasPrefix("-----BEGIN PRIVATE KEY-----") && text.hasSuffix("-----END PRIVATE KEY-----\n"),
                    "round \(round): key file \(name) is whole")
        }
        return pendingLeft
    }
}

/// Signatures acknowledged to clients, across rounds: signature ID → the JWS received.
final class Acknowledged: @unchecked Sendable {
    private let lock = NSLock()
    private var table: [String: String] = [:]

    func add(id: String, jws: String) { lock.withLock { table[id] = jws } }

    /// The signatures acknowledged since the last call.
    func drain() -> [String: String] {
        lock.withLock {
            defer { table = [:] }
            return table
        }
    }
}

/// One round's load: threads on their own connections until the daemon dies under them (or
/// ``stop()``). Without `rotating`, no key rotations (PostgresCrashSafetyTests).
///
/// Each thread expects one outcome of each call (a signature, a batch signed whole, a 102 for
/// a wrong answer, a new key) and counts it; anything else ends the thread as ``unexpected``,
/// as does any error but the connection's loss when the daemon dies (``lost``). The test waits
/// for every kind to have succeeded before it kills (``waitForEveryKind(timeout:)``), so a
/// load that stops working (batches refused, say) fails the round instead of leaving its
/// checks nothing to check.
final class Load: @unchecked Sendable {
    let socketPath: String
    let mallory: String
    let ledger: Acknowledged
    let rotating: Bool
    /// The most wrong answers sent (below `max_attempts`).
    let maxWrong: Int
    private let running = Atomic<Bool>(true)
    /// Guards the state below; broadcast when a count grows or a thread ends.
    private let lock = NSCondition()
    private var ids: [String] = []
    private var kids: [String] = []
    private var acked = 0
    private var inFlight = 0
    private var done = Done()
    private var unexpectedSeen: [String] = []
    private var lostSeen: [String] = []
    private let group = DispatchGroup()

    /// What the load got acknowledged, by kind.
    struct Done: Equatable, CustomStringConvertible {
        var levelZero = 0
        var levelOne = 0
        var batches = 0
        var batchItems = 0
        var rotations = 0

        mutating func add(_ other: Done) {
            levelZero += other.levelZero
            levelOne += other.levelOne
            batches += other.batches
            batchItems += other.batchItems
            rotations += other.rotations
        }

        var description: String {
            "\(levelZero) level-0, \(levelOne) level-1, \(batches) batches (\(batchItems) items), \(rotations) rotations"
        }
    }

    /// A reply that is not the one the thread's call must get.
    struct Unexpected: Error, CustomStringConvertible {
        var description: String
    }

    init(socketPath: String, mallory: String, ledger: Acknowledged, rotating: Bool = true, maxWrong: Int = 60) {
        self.socketPath = socketPath
        self.mallory = mallory
        self.ledger = ledger
        self.rotating = rotating
        self.maxWrong = maxWrong
    }

    private var isRunning: Bool { running.load(ordering: .relaxed) }

    var signatureIDs: [String] { lock.withLock { ids } }
    var rotatedKids: [String] { lock.withLock { kids } }
    var failures: (acked: Int, inFlight: Int) { lock.withLock { (acked, inFlight) } }
    var acknowledged: Done { lock.withLock { done } }
    /// Threads ended by an unexpected reply or error, each with what it got.
    var unexpected: [String] { lock.withLock { unexpectedSeen } }
    /// Threads ended by the connection's loss (the daemon killed under them).
    var lost: [String] { lock.withLock { lostSeen } }

    func start() {
        for worker in 0..<3 { spawn("level 0 #\(worker)") { try self.pipelinedLevelZero(worker) } }
        spawn("level 1") { try self.passwordSignings() }
        spawn("batches") { try self.batches() }
        spawn("wrong answers") { try self.wrongPasswords() }
        if rotating { spawn("rotations") { try self.rotations() } }
    }

    func join() { group.wait() }

    /// Ends the load on a daemon that stays up: each thread finishes its call and returns.
    func stop() {
        running.store(false, ordering: .relaxed)
        join()
    }

    private func spawn(_ name: String, _ body: @escaping @Sendable () throws -> Void) {
        group.enter()
        Thread.detachNewThread {
            defer { self.group.leave() }
            do {
                try body()
            } catch let error as ClientError where Self.isConnectionLost(error) {
                self.count { self.lostSeen.append("\(name): \(error)") }
            } catch {
                self.count { self.unexpectedSeen.append("\(name): \(error)") }
            }
        }
    }

    /// Changes the state under the lock and wakes ``waitForEveryKind(timeout:)``.
    private func count(_ change: () -> Void) {
        lock.withLock {
            change()
            lock.broadcast()
        }
    }

    /// Whether every kind of load has had a success acknowledged.
    private var everyKindDone: Bool {
        done.levelZero > 0 && done.levelOne > 0 && done.batches > 0 && acked > 0 && (!rotating || done.rotations > 0)
    }

    /// Waits until every kind of load has had a success acknowledged (true), or a thread has
    /// ended, or `timeout` seconds have passed (false).
    func waitForEveryKind(timeout: Double = 60) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while !everyKindDone, unexpectedSeen.isEmpty, lostSeen.isEmpty, lock.wait(until: deadline) {}
        return everyKindDone
    }

    /// What a client sees when the daemon is killed: the connection closed or reset, or (for
    /// a thread connecting after the kill) no socket to connect to. A timeout is not one: a
    /// killed daemon's connections close at once.
    static func isConnectionLost(_ error: ClientError) -> Bool {
        switch error {
        case .closed: true
        case let .system(_, code): [ECONNRESET, EPIPE, ECONNREFUSED, ENOENT].contains(code)
        default: false
        }
    }

    /// Records a single signing that must have signed (status 100).
    private func recordSignature(_ reply: ClientReply, _ what: String) throws {
        guard reply.statusCode(of: "onAuthenticateUserAndSignData") == 100,
              let details = reply.event("onAuthenticateUserAndSignData")?["details"],
              let id = details["dataSignatureID"]?.stringValue, let jws = details["payloadSignature"]?.stringValue
        else { throw Unexpected(description: "\(what) not signed: code \(reply.code) \(reply.message) \(reply.shape)") }
        ledger.add(id: id, jws: jws)
        lock.withLock { ids.append(id) }
    }

    /// Batches of 16 level-0 signings sent at once, then their replies.
    private func pipelinedLevelZero(_ worker: Int) throws {
        let client = try RawClient(socketPath: socketPath)
        var batch = 0
        while isRunning {
            batch += 1
            var lines = ""
            for index in 0..<16 {
                lines += #"{"id":"\#(worker)-\#(batch)-\#(index)","op":"authenticateUserAndSignData","user":"alice","payload":"load \#(worker) \#(batch) \#(index)","reason":"crash","authLevel":0,"authenticatorType":0}"# + "\n"
            }
            try client.send(lines)
            for _ in 0..<16 {
                try recordSignature(try client.reply(timeout: 30), "a level-0 signing")
                count { done.levelZero += 1 }
            }
        }
    }

    /// The `getPassword` a level-1 request must get.
    private func requireChallenge(_ reply: ClientReply, _ what: String) throws {
        guard reply.code == 0, reply.eventNames == ["getPassword"] else {
            throw Unexpected(description: "\(what): no password challenge: code \(reply.code) \(reply.message) \(reply.shape)")
        }
    }

    /// Level-1 signings answered with the right password.
    private func passwordSignings() throws {
        let client = try RawClient(socketPath: socketPath)
        while isRunning {
            try requireChallenge(try client.call(#"{"id":1,"op":"authenticateUserAndSignData","user":"alice","payload":"level one","reason":"crash","authLevel":1,"authenticatorType":0}"#, timeout: 30), "a level-1 signing")
            try recordSignature(try client.call(#"{"id":2,"op":"setPassword","password":"Tr1cky-Pelican-42","challengeMode":12}"#, timeout: 30), "a level-1 signing")
            count { done.levelOne += 1 }
        }
    }

    /// The user of the batches: not alice, whose stored failures the test bounds by the one
    /// answer of hers in flight at the kill.
    static let batchUser = "batcher"

    /// Level-1 batches of 1 to 200 items answered with the right password: all of a batch is
    /// in the ledger, or none.
    private func batches() throws {
        let client = try RawClient(socketPath: socketPath)
        var batch = 0
        while isRunning {
            batch += 1
            let size = Int.random(in: 1...200)
            let items = (0..<size).map { #"{"payload":"crash batch \#(batch) item \#($0)","reason":"crash"}"# }.joined(separator: ",")
            try requireChallenge(try client.call(#"{"id":1,"op":"authenticateUserAndSignBatch","user":"\#(Self.batchUser)","items":[\#(items)],"authLevel":1,"authenticatorType":0}"#, timeout: 30), "a batch")
            let reply = try client.call(#"{"id":2,"op":"setPassword","password":"Tr1cky-Pelican-42","challengeMode":12}"#, timeout: 30)
            let outcome = reply.event("onAuthenticateUserAndSignBatch")
            let signatures = outcome?["signatures"]?.arrayValue ?? []
            guard outcome?["status"]?["code"]?.int == 100, signatures.count == size else {
                throw Unexpected(description: "a batch of \(size) not signed: code \(reply.code) \(reply.message) \(reply.shape), \(signatures.count) signatures")
            }
            for details in signatures {
                guard let id = details["dataSignatureID"]?.stringValue, let jws = details["payloadSignature"]?.stringValue else {
                    throw Unexpected(description: "a batch signature without ID or JWS: \(details)")
                }
                ledger.add(id: id, jws: jws)
                lock.withLock { ids.append(id) }
            }
            count { done.batches += 1; done.batchItems += size }
        }
    }

    /// Wrong step-up answers for this round's user, one at a time (at most `maxWrong`, below
    /// max_attempts): each must be a 102 retry.
    private func wrongPasswords() throws {
        let client = try RawClient(socketPath: socketPath)
        try requireChallenge(try client.call(#"{"id":1,"op":"authenticateUserAndSignData","user":"\#(mallory)","payload":"p","reason":"crash","authLevel":1,"authenticatorType":0}"#, timeout: 30), "\(mallory)'s signing")
        for _ in 0..<maxWrong where isRunning {
            lock.withLock { inFlight = 1 }
            let reply = try client.call(#"{"id":2,"op":"setPassword","password":"Wrong-Guess-71","challengeMode":12}"#, timeout: 30)
            guard reply.statusCode(of: "getPassword") == 102 else {
                throw Unexpected(description: "a wrong answer not refused with 102: code \(reply.code) \(reply.message) \(reply.shape)")
            }
            count { acked += 1; inFlight = 0 }
        }
    }

    /// A key rotation now and then.
    private func rotations() throws {
        let client = try RawClient(socketPath: socketPath)
        while isRunning {
            usleep(120_000)
            let reply = try client.call(#"{"id":1,"op":"admin.rotateKey"}"#, timeout: 30)
            guard reply.code == 0, let kid = reply.result?["activeKid"]?.stringValue else {
                throw Unexpected(description: "a rotation refused: code \(reply.code) \(reply.message)")
            }
            count { kids.append(kid); done.rotations += 1 }
        }
    }
}
