import Foundation
import StepSignProtocol
import StepSignClient
import StepSignTestSupport
import Synchronization
import Testing

/// The real daemon on the real PostgreSQL (SPEC §5.2, issue 14): one daemon, then two
/// daemons with their own state directories and sockets sharing one database.
@Suite("Daemon on PostgreSQL", .blocking, .enabled(if: PostgresServer.enabled))
struct PostgresDaemonTests {
    private static func signatureDetails(_ reply: ClientReply) -> JSONValue? {
        reply.event("onAuthenticateUserAndSignData")?["details"]
    }

    @Test("one daemon on PostgreSQL signs at level 0 and 1; auditVerify passes; getSignature finds them")
    func oneDaemon() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let daemon = try DaemonHarness(config: database.config)
        #expect(daemon.log.contains("storage=postgresql"), "\(daemon.log)")
        try daemon.addUser()
        let connection = try daemon.connect()
        let level0 = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "p0", "reason": "r", "authLevel": 0, "authenticatorType": 0,
        ])
        let details0 = try #require(Self.signatureDetails(level0), "\(level0.code) \(level0.message)")
        let level1 = try connection.signWithPassword(user: "alice", password: DaemonHarness.password, payload: "p1")
        let details1 = try #require(Self.signatureDetails(level1), "\(level1.code) \(level1.message) \(level1.shape)")
        #expect(details1["authLevel"]?.int == 1)

        let audit = try #require(try connection.call("admin.auditVerify").result)
        #expect(audit["ok"]?.boolValue == true, "\(audit)")
        let signatureSeqs = try daemon.ledgerSignatures().compactMap { $0["seq"]?.int }
        #expect(signatureSeqs.count == 2)
        #expect(audit["entries"]?.int == (try daemon.ledgerEntries().count))
        for (details, seq) in zip([details0, details1], signatureSeqs) {
            let signatureID = try #require(details["dataSignatureID"]?.stringValue)
            let row = try #require(try connection.call("getSignature", ["signatureID": signatureID]).result)
            #expect(row["seq"]?.int == seq)
            #expect(row["payloadSignature"]?.stringValue == details["payloadSignature"]?.stringValue)
        }
        // No online backup of a shared database: pg_dump on the server (docs/backups.md).
        let backup = try connection.call("admin.backup")
        #expect(backup.code == 170 && backup.message.contains("pg_dump"), "\(backup.code) \(backup.message)")
        // A clean stop checkpoints the head into PostgreSQL and closes the store.
        #expect(daemon.stop() == 0)
        #expect(daemon.logLines(message: "log checkpoint").contains { $0.contains("reason=shutdown") }, "\(daemon.log)")
        try daemon.start()
        let again = try #require(try daemon.connect().call("admin.auditVerify").result)
        #expect(again["ok"]?.boolValue == true, "\(again)")
        #expect(again["entries"]?.int == (try daemon.ledgerEntries().count))
        #expect(try daemon.ledgerSignatures().count == 2)
    }

    @Test("on PostgreSQL the metrics count the pool's waits and the ledger's commits (issue 27)")
    func metricsOnPostgres() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let metrics = "/tmp/stepsign-metrics-\(UUID().uuidString.prefix(8)).sock"
        let daemon = try DaemonHarness(config: database.config + "\n[metrics]\nlisten = \"unix:\(metrics)\"\n")
        try daemon.addUser()
        let connection = try daemon.connect()
        for number in 0..<5 {
            let reply = try connection.call("authenticateUserAndSignData", [
                "user": "alice", "payload": "p\(number)", "reason": "r", "authLevel": 0, "authenticatorType": 0,
            ])
            #expect(Self.signatureDetails(reply) != nil, "\(reply.code) \(reply.message)")
        }
        let exposition = try #require(try MetricsScrape.get(socketPath: metrics))
        let waits = try #require(MetricsScrape.value("stepsign_postgres_pool_wait_duration_seconds_count", in: exposition),
                                 "\(exposition)")
        #expect(waits >= 5)
        let commits = try #require(MetricsScrape.value("stepsign_ledger_commit_duration_seconds_count", in: exposition))
        #expect(commits >= 5)
        #expect(MetricsScrape.value("stepsign_signatures_total{level=\"0\",authenticator=\"none\"}", in: exposition) == 5)
        #expect(daemon.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: metrics), "the metrics socket outlived the daemon")
    }

    @Test("on PostgreSQL (the async ledger writer): concurrent signings chain gaplessly; checkpoints by count and by time")
    func asyncWriterBatchesAndCheckpoints() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        // 8: the 42 entries (40 signatures and the start's 2 events) end between two counts.
        let daemon = try DaemonHarness(config: database.config + "\n[ledger]\ncheckpoint_entries = 8\ncheckpoint_seconds = 1")
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            do {
                let connection = try daemon.connect()
                for index in 0..<5 {
                    let reply = try connection.call("authenticateUserAndSignData", [
                        "user": "alice", "payload": "w\(worker)-\(index)", "reason": "r", "authLevel": 0, "authenticatorType": 0,
                    ])
                    if Self.signatureDetails(reply) == nil { failures.withLock { $0.append("\(reply.code) \(reply.message)") } }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let connection = try daemon.connect()
        let audit = try #require(try connection.call("admin.auditVerify").result)
        #expect(audit["ok"]?.boolValue == true, "\(audit)")
        #expect(try daemon.ledgerSignatures().count == 40)
        #expect(audit["entries"]?.int == (try daemon.ledgerEntries().count))
        // Every 7th entry is checkpointed in its batch; the head by time within a second or so.
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline, !daemon.log.contains("reason=seconds") { usleep(100_000) }
        #expect(daemon.log.contains("reason=entries"), "\(daemon.log)")
        #expect(daemon.log.contains("reason=seconds"), "\(daemon.log)")
        let checkpoints = try #require(try connection.call("admin.exportLedger").result?["logCheckpoints"]?.arrayValue?.compactMap { $0.stringValue })
        #expect(checkpoints.count >= 6, "\(checkpoints.count)")
        #expect(try #require(try connection.call("admin.auditVerify").result)["ok"]?.boolValue == true)
    }

    @Test("connections killed by the server: the daemon keeps running and reconnects by itself")
    func reconnectsAfterTerminatedConnections() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let daemon = try DaemonHarness(config: database.config)
        try daemon.addUser()
        try PostgresServer.administer(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database.name)' AND pid <> pg_backend_pid()")
        var codes: [Int] = []
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let reply = try daemon.connect().call("authenticateUserAndSignData", [
                "user": "alice", "payload": "after", "reason": "r", "authLevel": 0, "authenticatorType": 0,
            ])
            codes.append(reply.code)
            if Self.signatureDetails(reply) != nil { break }
            // While the pool reconnects, a request that needs the database gets 15.
            #expect(reply.code == 15, "\(reply.code) \(reply.message)")
            usleep(200_000)
        }
        #expect(codes.last == 0, "\(codes)")
        #expect(daemon.pid != nil)
        let audit = try #require(try daemon.connect().call("admin.auditVerify").result)
        #expect(audit["ok"]?.boolValue == true, "\(audit)")
    }

    @Test("password_file: its content never reaches the log; a missing one exits 78 naming the path, not a secret")
    func passwordFile() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let passwordFile = try PostgresServer.PasswordFile()
        defer { passwordFile.remove() }
        let (secret, file) = (passwordFile.secret, passwordFile.path)
        // The test server trusts its socket, so the password is read but never asked for.
        let daemon = try DaemonHarness(config: database.config + "\npassword_file = \"\(file)\"")
        try daemon.addUser()
        #expect(daemon.stop() == 0)
        #expect(!daemon.log.contains(secret))

        let missing = try DaemonHarness(config: database.config + "\npassword_file = \"\(file)-missing\"", start: false)
        try missing.start(waitForSocket: false)
        #expect(missing.process?.wait(timeout: 60) == 78, "\(missing.log)")
        #expect(missing.log.contains("\(file)-missing"), "\(missing.log)")

        // Strict modes: a password file that others may write is refused (exit 78).
        try FileManager.default.setAttributes([.posixPermissions: 0o622], ofItemAtPath: file)
        let loose = try DaemonHarness(config: database.config + "\npassword_file = \"\(file)\"", start: false)
        try loose.start(waitForSocket: false)
        #expect(loose.process?.wait(timeout: 60) == 78, "\(loose.log)")
        #expect(loose.log.contains("storage.postgresql.password_file"), "\(loose.log)")
        #expect(!loose.log.contains(secret))
    }

    @Test("the cluster's seal key: none, another one, or one others may read is exit 78 naming the cause")
    func sealKey() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let daemon = try DaemonHarness(config: database.config)
        try daemon.addUser()
        #expect(daemon.stop() == 0)

        let withoutKey = database.config.replacingOccurrences(of: TestSealKey.configLine, with: "")
        let none = try DaemonHarness(config: withoutKey, start: false)
        try none.start(waitForSocket: false)
        #expect(none.process?.wait(timeout: 60) == 78, "\(none.log)")
        #expect(none.log.contains("stepsign-seal-key") && none.log.contains("seal_key_file"), "\(none.log)")

        let directory = try TemporaryDirectory("seal-key", mode: 0o700)
        defer { directory.remove() }
        let other = directory.appending("other.key")
        let made = try Tools.run([Binaries.path("stepsign"), "admin", "cluster", "seal-key", "new", "--out", other])
        try #require(made.status == 0, "\(made.stderr)")
        let otherKey = withoutKey.replacingOccurrences(of: "backend = \"postgresql\"",
                                                        with: "backend = \"postgresql\"\nseal_key_file = \"\(other)\"")
        let wrong = try DaemonHarness(config: otherKey, start: false)
        try wrong.start(waitForSocket: false)
        #expect(wrong.process?.wait(timeout: 60) == 78, "\(wrong.log)")
        #expect(wrong.log.contains("not the one this database's credential records were sealed with"), "\(wrong.log)")

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: other)
        let readable = try DaemonHarness(config: otherKey, start: false)
        try readable.start(waitForSocket: false)
        #expect(readable.process?.wait(timeout: 60) == 78, "\(readable.log)")
        #expect(readable.log.contains("storage.seal_key_file"), "\(readable.log)")
    }

    @Test("a server that cannot be reached: a clear error and exit 69 (systemd retries)")
    func unreachableServer() throws {
        let daemon = try DaemonHarness(config: """
            [storage]
            backend = "postgresql"
            \(TestSealKey.configLine)
            [storage.postgresql]
            host = "/nonexistent-stepsign-pg"
            """, start: false)
        try daemon.start(waitForSocket: false)
        let status = daemon.process?.wait(timeout: 60)
        #expect(status == 69, "\(daemon.log)")
        #expect(daemon.log.contains("cannot reach PostgreSQL"), "\(daemon.log)")
    }

    @Test("a database that does not exist: exit 78 (a restart cannot fix it)")
    func missingDatabase() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let daemon = try DaemonHarness(config: PostgresServer.Database(name: "stepsign_no_such_db").config, start: false)
        try daemon.start(waitForSocket: false)
        let status = daemon.process?.wait(timeout: 60)
        #expect(status == 78, "\(daemon.log)")
    }

    @Test("two daemons on one database: users, signatures and the attempt budget are shared")
    func twoDaemons() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let root = try ClusterRoot()
        let daemons = try Cluster.startTwo(on: database, config: "", root: root)
        let (a, b) = (daemons[0], daemons[1])
        #expect(a.stateDirectory != b.stateDirectory && a.socketPath != b.socketPath)

        // A user added on A logs in on B.
        try a.addUser()
        try b.connect().requireLogin()

        // A signature made on A is found on B, and B's audit passes over both daemons' entries.
        let signed = try a.connect().signWithPassword(user: "alice", password: DaemonHarness.password, payload: "on A")
        let details = try #require(Self.signatureDetails(signed), "\(signed.code) \(signed.message) \(signed.shape)")
        let signatureID = try #require(details["dataSignatureID"]?.stringValue)
        let row = try #require(try b.connect().call("getSignature", ["signatureID": signatureID]).result)
        #expect(row["payloadSignature"]?.stringValue == details["payloadSignature"]?.stringValue)
        let onB = try b.connect().signWithPassword(user: "alice", password: DaemonHarness.password, payload: "on B")
        let detailsB = try #require(Self.signatureDetails(onB), "\(onB.code) \(onB.message) \(onB.shape)")
        // … and the other way round: B's signature is found on A, next in the one chain.
        let rowOnA = try #require(try a.connect().call("getSignature", ["signatureID": detailsB["dataSignatureID"]?.stringValue ?? ""]).result)
        #expect(rowOnA["payloadSignature"]?.stringValue == detailsB["payloadSignature"]?.stringValue)
        let signatureSeqs = try a.ledgerSignatures().compactMap { $0["seq"]?.int }
        #expect(row["seq"]?.int == signatureSeqs.first && rowOnA["seq"]?.int == signatureSeqs.last && signatureSeqs.count == 2,
                "\(row) \(rowOnA)")
        for daemon in [a, b] {
            let unknown = try daemon.connect().call("getSignature", ["signatureID": "0190a5b2-0000-7000-8000-000000000000"])
            #expect(unknown.code == 4 && unknown.result == nil, "\(unknown.code) \(unknown.message)")
        }
        for daemon in [a, b] {
            let audit = try #require(try daemon.connect().call("admin.auditVerify").result)
            #expect(audit["ok"]?.boolValue == true, "\(audit)")
            #expect(audit["entries"]?.int == (try daemon.ledgerEntries().count))
        }

        // Wrong answers on A and B draw on one budget (max_attempts = 3 in total).
        let wrongA = try a.connect().signWithPassword(user: "alice", password: Passwords.wrong)
        #expect(wrongA.event("getPassword")?["attemptsLeft"]?.int == 2, "\(wrongA.shape)")
        let wrongB = try b.connect().signWithPassword(user: "alice", password: Passwords.wrong)
        #expect(wrongB.event("getPassword")?["attemptsLeft"]?.int == 1, "\(wrongB.shape)")
        let wrongA2 = try a.connect().signWithPassword(user: "alice", password: Passwords.wrong)
        #expect(wrongA2.statusCode(of: "onAuthenticateUserAndSignData") == 153, "\(wrongA2.shape)")
        let rightB = try b.connect().signWithPassword(user: "alice", password: DaemonHarness.password)
        #expect(Self.signatureDetails(rightB)?["payloadSignature"] == nil, "\(rightB.shape)")
        #expect(rightB.shape.contains { $0.contains("status 153") } || rightB.code == 148 || rightB.statusCode(of: "getPassword") == 153,
                "\(rightB.code) \(rightB.shape)")
    }
}
