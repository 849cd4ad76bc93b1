import Foundation
import StepSignProtocol
import StepSignClient
import StepSignCrypto
import StepSignFormat
import StepSignTestSupport
import Testing

/// Someone who can write the database (a DBA, a restored backup, a process running as the
/// service user) edits the real SQLite file of a stopped daemon the way issue 12 describes:
/// drops the append-only triggers, edits columns, deletes rows and re-chains with the SPEC §5
/// formula. After a restart `admin.auditVerify` must report each edit (SPEC §5.3).
@Suite("Ledger attacks on the SQLite file", .blocking)
struct LedgerAttackTests {
    /// Drops the triggers, runs `sql`, and (when `rechain`) renumbers the rows 1… and
    /// recomputes every hash: entryHash = SHA-256(prev || SHA-256(JWS)), genesis 32 zero bytes.
    static let tamperScript = """
        import sqlite3, hashlib, sys
        db = sqlite3.connect(sys.argv[1])
        db.executescript("DROP TRIGGER IF EXISTS ledger_no_update; DROP TRIGGER IF EXISTS ledger_no_delete;")
        db.executescript(sys.argv[2])
        if sys.argv[3] == "rechain":
            db.execute("UPDATE ledger SET seq = seq + 1000000")
            prev = bytes(32)
            rows = db.execute("SELECT seq, jws FROM ledger ORDER BY seq").fetchall()
            for number, (seq, jws) in enumerate(rows, start=1):
                entry = hashlib.sha256(prev + hashlib.sha256(jws.encode()).digest()).digest()
                db.execute("UPDATE ledger SET seq = ?, prev_hash = ?, entry_hash = ? WHERE seq = ?", (number, prev, entry, seq))
                prev = entry
        db.commit()
        db.close()
        """

    /// A daemon with `count` level-0 signatures, stopped cleanly (which checkpoints the head).
    func stoppedDaemon(count: Int = 12) throws -> DaemonHarness {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        for index in 1...count {
            let reply = try connection.call("authenticateUserAndSignData", [
                "user": "alice", "payload": "entry \(index)", "reason": "audit", "authLevel": 0, "authenticatorType": 0,
            ])
            try #require(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        }
        let ok = try #require(try connection.call("admin.auditVerify").result)
        #expect(ok["ok"]?.boolValue == true, "\(ok)")
        #expect(daemon.stop() == 0)
        return daemon
    }

    func tamper(_ daemon: DaemonHarness, _ sql: String, rechain: Bool = false) throws {
        let result = try Tools.python(Self.tamperScript, daemon.stateDirectory + "/stepsign.sqlite", sql, rechain ? "rechain" : "no")
        try #require(result.status == 0, "\(result.stderr)")
    }

    /// Restarts the daemon and returns `admin.auditVerify`'s result.
    func audit(_ daemon: DaemonHarness) throws -> JSONValue {
        try daemon.start()
        return try #require(try daemon.connect().call("admin.auditVerify").result)
    }

    @Test("an edited user_name is reported: the row no longer matches its JWS sub")
    func editedUser() throws {
        let daemon = try stoppedDaemon()
        try tamper(daemon, "UPDATE ledger SET user_name = 'mallory' WHERE seq = 3")
        let result = try audit(daemon)
        #expect(result["ok"]?.boolValue == false, "\(result)")
        #expect(result["firstBadSeq"]?.int == 3)
        #expect((result["problem"]?.stringValue)?.contains("user") == true, "\(result)")
        // getSignature still shows the row as stored; the audit is what tells.
    }

    @Test("edited peer columns are reported: they no longer match the JWS peer claim")
    func editedPeer() throws {
        let daemon = try stoppedDaemon()
        try tamper(daemon, "UPDATE ledger SET peer_comm = 'innocent', peer_uid = 4242 WHERE seq = 6")
        let result = try audit(daemon)
        #expect(result["ok"]?.boolValue == false, "\(result)")
        #expect(result["firstBadSeq"]?.int == 6)
        #expect((result["problem"]?.stringValue)?.contains("peer") == true, "\(result)")
    }

    @Test("a middle row deleted and the chain recomputed is reported (the checkpoint no longer matches), and nothing more is signed")
    func deletedAndRechained() throws {
        let daemon = try stoppedDaemon()
        try tamper(daemon, "DELETE FROM ledger WHERE seq = 5", rechain: true)
        let result = try audit(daemon)
        #expect(result["ok"]?.boolValue == false, "\(result)")
        #expect(result["problem"]?.stringValue != nil)
        try expectSigningRefused(daemon)
    }

    @Test("the last rows removed are reported, and the daemon signs nothing more (no sequence number is used twice)")
    func truncatedTail() throws {
        let daemon = try stoppedDaemon()
        try tamper(daemon, "DELETE FROM ledger WHERE seq > 10")
        // The log's Merkle tree still has the removed entries' leaves (SPEC §5.5): the restart
        // records nothing, and the audit finds the ledger short of the shutdown checkpoint.
        let result = try audit(daemon)
        #expect(result["ok"]?.boolValue == false, "\(result)")
        #expect((result["problem"]?.stringValue)?.contains("ends at 10") == true, "\(result)")
        try expectSigningRefused(daemon)
        #expect(try daemon.ledgerEntries().count == 10)
    }

    /// The daemon runs, says in `status` why the log is refused, logs it at critical once, and
    /// answers every signing with 15, however often asked.
    func expectSigningRefused(_ daemon: DaemonHarness, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let connection = try daemon.connect()
        let status = try #require(try connection.call("status").result)
        // Fewer entries than the checkpoint this daemon kept (checked first at start), or, when
        // the store is asked first, its tree with leaves past the last entry.
        let problem = status["logProblem"]?.stringValue ?? ""
        #expect(problem.contains("fewer than the") || problem.contains("past the ledger's last entry"), "\(status)",
                sourceLocation: sourceLocation)
        for index in 1...3 {
            let reply = try connection.call("authenticateUserAndSignData", [
                "user": "alice", "payload": "after \(index)", "reason": "audit", "authLevel": 0, "authenticatorType": 0,
            ])
            #expect(reply.code == 15, "\(reply)", sourceLocation: sourceLocation)
        }
        let alarms = daemon.log.components(separatedBy: "\n").filter { $0.contains("level=critical") && $0.contains("Merkle tree") }
        #expect(alarms.count == 1, "\(alarms)", sourceLocation: sourceLocation)
    }

    @Test("a JWS replaced by not.a.signature with the chain recomputed is reported (every JWS is verified)")
    func replacedSignature() throws {
        let daemon = try stoppedDaemon()
        try tamper(daemon, "UPDATE ledger SET jws = 'not.a.signature' WHERE seq = 4", rechain: true)
        let result = try audit(daemon)
        #expect(result["ok"]?.boolValue == false, "\(result)")
        #expect(result["firstBadSeq"]?.int == 4)
        #expect((result["problem"]?.stringValue)?.contains("signature") == true, "\(result)")
    }

    @Test("checkpoints removed along with the rows: the run without a checkpoint is too long")
    func checkpointsRemoved() throws {
        let daemon = try DaemonHarness(config: "[ledger]\ncheckpoint_entries = 4")
        let connection = try daemon.connect()
        for index in 1...10 {
            let reply = try connection.call("authenticateUserAndSignData", [
                "user": "alice", "payload": "entry \(index)", "reason": "audit", "authLevel": 0, "authenticatorType": 0,
            ])
            try #require(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        }
        let ok = try #require(try connection.call("admin.auditVerify").result)
        #expect(ok["ok"]?.boolValue == true, "\(ok)")
        #expect(ok["checkpoints"]?.int ?? 0 >= 2, "\(ok)")
        #expect(daemon.stop() == 0)
        try tamper(daemon, """
            DROP TRIGGER IF EXISTS ledger_checkpoints_no_delete;
            DELETE FROM ledger_checkpoints;
            DROP TRIGGER IF EXISTS log_checkpoints_no_delete;
            DELETE FROM log_checkpoints;
            UPDATE ledger SET user_name = 'mallory' WHERE seq = 2;
            """)
        // Without checkpoints the edit is still a column mismatch; the missing checkpoints are
        // reported too, at the first entry past the allowed run.
        let result = try audit(daemon)
        #expect(result["ok"]?.boolValue == false, "\(result)")
        // None of the removed ones: only the restart's own C2SP checkpoint of the whole log,
        // made after the tree proved consistent with the one the daemon kept (SPEC §5.5).
        #expect(result["checkpoints"]?.int == 1)
    }

    @Test("an export with one entry duplicated and re-chained: stepsign-verify ledger exits 1 (signature IDs are unique)")
    func duplicatedExportEntry() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        for index in 1...6 {
            _ = try connection.call("authenticateUserAndSignData", [
                "user": "alice", "payload": "entry \(index)", "reason": "audit", "authLevel": 0, "authenticatorType": 0,
            ])
        }
        let (exported, jwks) = try daemon.exportLedgerAndKeys()
        var entries = exported.stdout.split(separator: "\n").compactMap { line -> JSONValue? in
            let object = try? JSONParser.parse(Array(line.utf8))
            return object?["seq"] == nil ? nil : object
        }
        entries.insert(entries[2], at: 3)
        var previous = [UInt8](repeating: 0, count: 32)
        var lines: [String] = []
        for (index, var entry) in entries.enumerated() {
            let jws = try #require(entry["payloadSignature"]?.stringValue)
            let hash = SHA256.hash(previous + SHA256.hash(Array(jws.utf8)))
            entry["seq"] = .int(Int64(index + 1))
            entry["prevHash"] = .string(Hex.encode(previous))
            entry["entryHash"] = .string(Hex.encode(hash))
            previous = hash
            lines.append(entry.jsonText)
        }
        let path = daemon.directory.appendingPathComponent("duplicated.jsonl").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let result = try Tools.run([Binaries.path("stepsign-verify"), "ledger", path, "--keys", jwks])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("first bad seq 4"), "\(result.stdout)")
    }
}
