import Foundation
import StepSignProtocol
import StepSignClient
import StepSignCrypto
import StepSignFormat
import StepSignTestSupport
import Testing

/// Ledger checkpoints (SPEC §5.3): made every `checkpoint_entries`, on `getCheckpoint` and on
/// shutdown; logged; exported; verified by stepsign-verify and by PyJWT.
@Suite("Ledger checkpoints")
struct CheckpointTests {
    func signLevel0(_ connection: StepSignConnection, count: Int) throws {
        for index in 1...count {
            let reply = try connection.call("authenticateUserAndSignData", [
                "user": "alice", "payload": "entry \(index)", "reason": "checkpoint", "authLevel": 0, "authenticatorType": 0,
            ])
            try #require(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        }
    }

    @Test("getCheckpoint signs the head; the checkpoint verifies and is in the log")
    func getCheckpoint() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        try signLevel0(connection, count: 3)
        let reply = try #require(try connection.call("getCheckpoint").result)
        let jws = try #require(reply["checkpointJWS"]?.stringValue)
        let (checkpoint, _) = try LedgerCheckpoint.verify(jws, trustedKeys: try connection.trustedKeys())
        // SPEC §5.5: "checkpoint" is the log's C2SP note of the same head, signed with both
        // published log keys, logged and stored.
        let note = try SignedNote(parsing: try #require(reply["checkpoint"]?.stringValue))
        let logKeys = try #require(try connection.call("getPublicKeys").result?["logKeys"]?.arrayValue)
            .map { try NoteVerifierKey(try #require($0.stringValue)) }
        #expect(try note.verifiedKeys(logKeys).count == 2)
        #expect(try LogCheckpoint(text: note.text).size == checkpoint.seq)
        let stored = try #require(try connection.call("admin.exportLedger").result?["logCheckpoints"]?.arrayValue)
        #expect(stored.last?.stringValue == note.serialized)
        #expect(checkpoint.seq == Int64(DaemonHarness.startEvents + 3))
        #expect(checkpoint.iss == "stepsign-test")
        let row = try #require(try connection.call("admin.exportLedger").result?["entries"]?.arrayValue)
        #expect(row.last?["entryHash"]?.stringValue == checkpoint.entryHash)
        #expect(row.last?["user"]?.stringValue == "alice")
        #expect((row.last?["peer"])?["pid"]?.int == Int(getpid()))
        #expect(daemon.log.contains(jws), "the checkpoint is written to the log")
        let header = try JWS.parse(jws).header
        #expect(header.typ == "stepsign-checkpoint+jwt")
    }

    @Test("every checkpoint_entries entries a checkpoint is stored, exported and logged; shutdown adds one")
    func everyNEntries() throws {
        let daemon = try DaemonHarness(config: "[ledger]\ncheckpoint_entries = 3")
        let connection = try daemon.connect()
        try signLevel0(connection, count: 8)
        let result = try #require(try connection.call("admin.exportLedger").result)
        let checkpoints = try #require(result["checkpoints"]?.arrayValue?.compactMap { $0.stringValue })
        let trusted = try connection.trustedKeys()
        let seqs = try checkpoints.map { try LedgerCheckpoint.verify($0, trustedKeys: trusted).checkpoint.seq }
        // Eight signatures after the daemon's start events (SPEC §5.4): 10 entries, the last
        // one past the last count, so that shutdown adds a checkpoint.
        let head = DaemonHarness.startEvents + 8
        #expect(seqs == Array(stride(from: 3, through: Int64(head), by: 3)), "\(seqs)")
        let audit = try #require(try connection.call("admin.auditVerify").result)
        #expect(audit["ok"]?.boolValue == true, "\(audit)")
        #expect((audit["checkpoints"]?.int ?? 0) >= seqs.count, "JWS checkpoints and the log's notes")
        #expect(audit["problem"] == .null)
        #expect(daemon.stop() == 0)
        #expect(daemon.log.contains("seq=\(head)"), "shutdown checkpoint logged")
        try daemon.start()
        let after = try #require(try daemon.connect().call("admin.auditVerify").result)
        #expect((after["checkpoints"]?.int ?? 0) > seqs.count, "\(after)")
    }

    @Test("stepsign-verify ledger checks an export with its checkpoints; --checkpoint catches a cut-off export")
    func verifyWithCheckpointFile() throws {
        let daemon = try DaemonHarness(config: "[ledger]\ncheckpoint_entries = 4")
        let connection = try daemon.connect()
        try signLevel0(connection, count: 9)
        let reply = try #require(try connection.call("getCheckpoint").result)
        let kept = try #require(reply["checkpointJWS"]?.stringValue)
        let keptPath = daemon.directory.appendingPathComponent("kept.jws").path
        try kept.write(toFile: keptPath, atomically: true, encoding: .utf8)
        let keptNotePath = daemon.directory.appendingPathComponent("kept.note").path
        try #require(reply["checkpoint"]?.stringValue).write(toFile: keptNotePath, atomically: true, encoding: .utf8)
        let (exported, jwks) = try daemon.exportLedgerAndKeys()
        let lines = exported.stdout.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.contains("\"checkpoint\"") }.count == 3, "\(lines)")
        func verify(_ lines: [String], _ extra: [String] = []) throws -> Tools.Result {
            let path = daemon.directory.appendingPathComponent("export-\(UUID().uuidString).jsonl").path
            try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            return try Tools.run([Binaries.path("stepsign-verify"), "ledger", path, "--keys", jwks, "--checkpoint-entries", "4"] + extra)
        }
        let whole = try verify(lines, ["--checkpoint", keptPath])
        #expect(whole.status == 0, "\(whole.stdout)\(whole.stderr)")
        #expect(whole.stdout.contains("\(DaemonHarness.startEvents + 9) entries"), "\(whole.stdout)")
        // The last two entries and every checkpoint line removed: only the kept checkpoint tells.
        let entries = lines.filter { !$0.contains("\"checkpoint\"") && !$0.contains("\"logCheckpoint\"") }
        let cut = Array(entries.dropLast(2))
        let noCheckpoint = try verify(cut, ["--checkpoint-entries", "0"])
        #expect(noCheckpoint.status == 0, "a consistent prefix alone verifies: \(noCheckpoint.stdout)")
        let caught = try verify(cut, ["--checkpoint-entries", "0", "--checkpoint", keptPath])
        #expect(caught.status == 1, "\(caught.stdout)")
        #expect(caught.stdout.contains("truncated"), "\(caught.stdout)")
        // The log's C2SP checkpoint kept elsewhere tells the same (SPEC §5.5).
        let caughtByNote = try verify(cut, ["--checkpoint-entries", "0", "--checkpoint", keptNotePath])
        #expect(caughtByNote.status == 1, "\(caughtByNote.stdout)")
        #expect(caughtByNote.stdout.contains("fewer than"), "\(caughtByNote.stdout)")
        #expect(try verify(lines, ["--checkpoint", keptNotePath]).status == 0)
        // With the stretch rule on, the missing checkpoint lines are reported first.
        #expect(try verify(cut).status == 1)
    }

    @Test("while entries are added, a checkpoint follows within checkpoint_seconds without anyone asking")
    func timedCheckpoint() throws {
        let daemon = try DaemonHarness(config: "[ledger]\ncheckpoint_seconds = 1")
        let connection = try daemon.connect()
        try signLevel0(connection, count: 2)
        let trusted = try connection.trustedKeys()
        var seqs: [Int64] = []
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let checkpoints = try #require(try connection.call("admin.exportLedger").result?["checkpoints"]?.arrayValue?.compactMap { $0.stringValue })
            seqs = try checkpoints.map { try LedgerCheckpoint.verify($0, trustedKeys: trusted).checkpoint.seq }
            if seqs.last == Int64(DaemonHarness.startEvents + 2) { break }
            usleep(100_000)
        }
        #expect(seqs.last == Int64(DaemonHarness.startEvents + 2), "\(seqs)")
        #expect(daemon.log.contains("reason=seconds"), "\(daemon.log)")
    }

    @Test("PyJWT verifies a checkpoint with the exported JWKS")
    func pyJWTVerifiesCheckpoint() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        try signLevel0(connection, count: 2)
        let jws = try #require(try connection.call("getCheckpoint").result?["checkpointJWS"]?.stringValue)
        let jwks = Data(try #require(try connection.call("getPublicKeys").result?["jwks"]).jsonBytes)
        let script = """
            import sys, json, jwt
            jwks = jwt.PyJWKSet.from_json(sys.argv[1])
            token = sys.argv[2]
            kid = jwt.get_unverified_header(token)["kid"]
            key = next(k for k in jwks.keys if k.key_id == kid)
            claims = jwt.decode(token, key=key, algorithms=["ES256"])
            assert jwt.get_unverified_header(token)["typ"] == "stepsign-checkpoint+jwt"
            print(json.dumps(claims, sort_keys=True))
            """
        let result = try Tools.python(script, String(decoding: jwks, as: UTF8.self), jws)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#""seq": \#(DaemonHarness.startEvents + 2)"#), "\(result.stdout)")
    }
}
