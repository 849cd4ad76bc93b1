#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StepSignClient
import StepSignStorage
import StepSignTestSupport
import Testing

/// SIGKILL under load with two daemons on one PostgreSQL (SPEC §5.2: "a daemon killed at any
/// moment loses no acknowledged signature and leaves no gap"), A and B alternately.
///
/// Each round puts the load of ``CrashSafetyTests`` (pipelined level-0 signings, level-1
/// password signings and batches, wrong step-up passwords for the round's user, at most 40 per
/// daemon; no key rotations) on both daemons at once, waits until each kind has had a success
/// acknowledged on each, kills one of them with SIGKILL at a random moment after that, stops
/// the load on the other, restarts the killed one and checks on both (every load thread got
/// what it asked for, on the killed daemon until the kill took its connection):
/// - every signature acknowledged on either daemon is in the ledger with the very JWS the
///   client got; signature IDs are unique; the last entry checked before keeps its hash;
/// - `admin.auditVerify` passes on both, over the whole chain, and `status.signatures` is its
///   length on both;
/// - the round's user (wrong answers through both daemons, one budget) has between the
///   failures acknowledged and those plus the answer in flight on the killed daemon stored;
///   earlier rounds' users keep their counts exactly; alice (right answers only) at most one
///   per kill whose reservation has not expired yet;
/// - the restarted daemon signs.
///
/// Rounds: `STEPSIGN_PG_CRASH_ROUNDS` (default 4; `scripts/crash-soak --postgresql` runs 20).
@Suite("Crash safety on PostgreSQL", .blocking, .enabled(if: PostgresServer.enabled))
struct PostgresCrashSafetyTests {
    static let maxAttempts = 100

    @Test("SIGKILL A and B alternately under load on one PostgreSQL: nothing acknowledged lost, chain whole, counters in bounds")
    func killAlternately() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let rounds = Int(ProcessInfo.processInfo.environment["STEPSIGN_PG_CRASH_ROUNDS"] ?? "") ?? 4
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let root = try ClusterRoot()
        let settings = database.config + "\n[password]\nmax_attempts = \(Self.maxAttempts)\nblock_seconds = 0\n" + root.config
        let a = try DaemonHarness(config: "instance = \"host-a\"\n" + settings)
        let b = try DaemonHarness(config: "instance = \"host-b\"\n" + settings)
        try root.endorse([(a, "host-a"), (b, "host-b")])
        try a.addUser()
        try a.addUser(Load.batchUser)
        let daemons = [a, b]
        let ledger = Acknowledged()
        var failuresSoFar: [String: Int] = [:]
        var verifiedCount = 0
        var anchorHash = ""
        var acknowledgedTotal = 0
        var generator = SystemRandomNumberGenerator()
        var total = Load.Done()     // what the loads got acknowledged, over all rounds
        var kills: [Date] = []

        for round in 1...rounds {
            let victim = (round - 1) % 2
            let name = victim == 0 ? "A" : "B"
            let mallory = "mallory\(round)"
            try daemons[1 - victim].addUser(mallory)
            let loads = daemons.map { Load(socketPath: $0.socketPath, mallory: mallory, ledger: ledger, rotating: false, maxWrong: 40) }
            loads.forEach { $0.start() }
            // Every kind of load got through once on each daemon before the kill.
            for (index, load) in loads.enumerated() {
                #expect(load.waitForEveryKind(), "round \(round): \(index == 0 ? "A" : "B"): not every kind of load got through: \(load.acknowledged), \(load.unexpected)")
            }
            usleep(UInt32.random(in: 0...600_000, using: &generator))
            let status = daemons[victim].stop(signal: SIGKILL)
            kills.append(Date())
            #expect(status == 128 + SIGKILL, "round \(round): \(name) was killed (\(status))")
            loads[victim].join()
            loads[1 - victim].stop()
            // Every thread got what it asked for: on the killed daemon until the kill took its
            // connection, on the other until the load stopped (its connections are never lost).
            for (index, load) in loads.enumerated() {
                #expect(load.unexpected.isEmpty, "round \(round): \(index == victim ? "killed" : "surviving") daemon: \(load.unexpected)")
                total.add(load.acknowledged)
            }
            #expect(loads[1 - victim].lost.isEmpty, "round \(round): the surviving daemon's load lost connections: \(loads[1 - victim].lost)")
            try daemons[victim].start()

            let admins = try daemons.map { try $0.connect() }
            // Every signature acknowledged since the last check is in the ledger as sent.
            let fresh = try Self.exportLedger(admins[victim], afterSeq: max(0, verifiedCount - 1))
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
            for admin in admins {
                let audit = try admin.call("admin.auditVerify")
                #expect(audit.result?["ok"]?.boolValue == true, "round \(round): audit \(audit.object)")
                #expect(audit.result?["entries"]?.int == verifiedCount)
                // `signatures` counts signatures; the restarts' events (SPEC §5.4) are entries too.
                #expect(try admin.call("status").result?["signatures"]?.int == verifiedCount - (try daemons[0].ledgerEventCount()))
            }

            // One budget through both daemons: acknowledged ≤ stored ≤ acknowledged + the one
            // in flight on the killed daemon (the survivor's load ended between answers).
            let stored = Self.maxAttempts - (try Self.attemptsLeft(admins[0], user: mallory))
            let acked = loads.map(\.failures.acked).reduce(0, +)
            let inFlight = loads.map(\.failures.inFlight).reduce(0, +)
            #expect(stored >= acked && stored <= acked + inFlight,
                    "round \(round): \(mallory) has \(stored) failures stored, \(acked) acknowledged, \(inFlight) in flight")
            for (user, count) in failuresSoFar {
                #expect(Self.maxAttempts - (try Self.attemptsLeft(admins[1], user: user)) == count, "\(user) kept its count")
            }
            failuresSoFar[mallory] = stored
            // At most the answer in flight at each kill whose reservation has not expired yet.
            let recentKills = kills.filter { $0 > Date().addingTimeInterval(-AttemptReservation.lifetime) }.count
            #expect(Self.maxAttempts - (try Self.attemptsLeft(admins[1], user: DaemonHarness.user)) <= recentKills,
                    "alice never failed")
            print("PostgreSQL crash round \(round): killed \(name); \(acknowledged.count) signatures acknowledged, ledger \(verifiedCount), "
                  + "\(mallory) failures stored \(stored) (acknowledged \(acked), in flight \(inFlight))")

            // The restarted daemon signs (and so does the other).
            for admin in admins {
                let signed = try admin.call("authenticateUserAndSignData", [
                    "user": "alice", "payload": "after round \(round)", "reason": "crash test", "authLevel": 0, "authenticatorType": 0,
                ])
                #expect(signed.statusCode(of: "onAuthenticateUserAndSignData") == 100, "round \(round): \(signed.code) \(signed.message)")
                if let details = signed.event("onAuthenticateUserAndSignData")?["details"],
                   let id = details["dataSignatureID"]?.stringValue, let jws = details["payloadSignature"]?.stringValue {
                    ledger.add(id: id, jws: jws)
                }
            }
        }
        #expect(acknowledgedTotal > rounds, "the load signed something")
        print("PostgreSQL crash rounds: \(total) acknowledged in all")
        #expect(a.stop() == 0 && b.stop() == 0)
    }

    private struct Row {
        var seq: Int
        var id: String
        var jws: String
        var entryHash: String
    }

    private static func exportLedger(_ admin: StepSignConnection, afterSeq: Int) throws -> [Row] {
        var out: [Row] = []
        var after = afterSeq
        while true {
            let entries = try admin.call("admin.exportLedger", ["afterSeq": after, "limit": 10_000]).result?["entries"]?.arrayValue ?? []
            for entry in entries {
                out.append(Row(seq: entry["seq"]?.int ?? -1, id: entry["signatureID"]?.stringValue ?? "",
                               jws: entry["payloadSignature"]?.stringValue ?? "", entryHash: entry["entryHash"]?.stringValue ?? ""))
                after = entry["seq"]?.int ?? after
            }
            if entries.count < 10_000 { return out }
        }
    }

    /// `attemptsLeft` of a level-1 challenge for `user` (opening one counts nothing), then cancelled.
    private static func attemptsLeft(_ connection: StepSignConnection, user: String) throws -> Int {
        let reply = try connection.call("authenticateUserAndSignData", [
            "user": user, "payload": "probe", "reason": "probe", "authLevel": 1, "authenticatorType": 0,
        ])
        _ = try connection.call("resetAuthenticateUserAndSignDataState")
        return reply.int("attemptsLeft", of: "getPassword") ?? -1
    }
}
