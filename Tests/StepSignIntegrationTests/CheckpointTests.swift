import Foundation
import StepSignProtocol
import StepSignClient
import StepSignCrypto
import StepSignFormat
import StepSignTestSupport
import Testing

/// The log's checkpoints (SPEC §5.3, §5.5: C2SP notes, which replace the JWS checkpoints): made
/// every `checkpoint_entries` in the batch's transaction, every `checkpoint_seconds`, on
/// `getCheckpoint` and on shutdown; logged; exported; verified by stepsign-verify.
@Suite("Ledger checkpoints", .blocking)
struct CheckpointTests {
    func signLevel0(_ connection: StepSignConnection, count: Int) throws {
        for index in 1...count {
            let reply = try connection.call("authenticateUserAndSignData", [
                "user": "alice", "payload": "entry \(index)", "reason": "checkpoint", "authLevel": 0, "authenticatorType": 0,
            ])
            try #require(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        }
    }

    /// The sizes of the log's checkpoints in the export (notes), each verified with the
    /// published log keys, and the root of each checked against the exported entries.
    func exportedCheckpointSizes(_ connection: StepSignConnection) throws -> [Int64] {
        let result = try #require(try connection.call("admin.exportLedger").result)
        let logKeys = try #require(try connection.call("getPublicKeys").result?["logKeys"]?.arrayValue)
            .map { try NoteVerifierKey(try #require($0.stringValue)) }
        let entries = try #require(result["entries"]?.arrayValue).map { try #require($0["payloadSignature"]?.stringValue) }
        return try #require(result["logCheckpoints"]?.arrayValue).map { value in
            let note = try SignedNote(parsing: try #require(value.stringValue))
            #expect(try note.verifiedKeys(logKeys).count == 2)
            let checkpoint = try LogCheckpoint(text: note.text)
            var tree = MerkleFrontier()
            for jws in entries.prefix(Int(checkpoint.size)) { _ = tree.append(leafHash: MerkleHash.leaf(Array(jws.utf8))) }
            #expect(checkpoint.rootHash == tree.root, "the root of \(checkpoint.size)")
            return checkpoint.size
        }
    }

    @Test("getCheckpoint signs the log as stored: a C2SP note with both log keys' lines, stored, exported, logged; no JWS")
    func getCheckpoint() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        try signLevel0(connection, count: 3)
        let reply = try #require(try connection.call("getCheckpoint").result)
        #expect(reply["checkpointJWS"] == nil, "SPEC 5.5: the notes replace the JWS checkpoints")
        let note = try SignedNote(parsing: try #require(reply["checkpoint"]?.stringValue))
        let logKeys = try #require(try connection.call("getPublicKeys").result?["logKeys"]?.arrayValue)
            .map { try NoteVerifierKey(try #require($0.stringValue)) }
        #expect(try note.verifiedKeys(logKeys).count == 2)
        let checkpoint = try LogCheckpoint(text: note.text)
        #expect(checkpoint.size == Int64(DaemonHarness.startEvents + 3))
        let export = try #require(try connection.call("admin.exportLedger").result)
        #expect(export["logCheckpoints"]?.arrayValue?.last?.stringValue == note.serialized)
        #expect(export["checkpoints"]?.arrayValue?.isEmpty == true, "no JWS checkpoint is made")
        #expect(try exportedCheckpointSizes(connection).last == checkpoint.size)
        // Asked again with nothing new: the same checkpoint, not another row.
        #expect(try connection.call("getCheckpoint").result?["checkpoint"]?.stringValue == note.serialized)
        #expect(try exportedCheckpointSizes(connection).filter { $0 == checkpoint.size }.count == 1)
        #expect(daemon.log.contains("size=\(checkpoint.size)") && daemon.log.contains("log checkpoint"),
                "the checkpoint is written to the log")
    }

    @Test("every checkpoint_entries entries a checkpoint is signed in the batch's transaction, stored, exported and logged; shutdown adds one")
    func everyNEntries() throws {
        let daemon = try DaemonHarness(config: "[ledger]\ncheckpoint_entries = 3")
        let connection = try daemon.connect()
        try signLevel0(connection, count: 8)
        let sizes = try exportedCheckpointSizes(connection)
        // Eight signatures after the daemon's start events (SPEC §5.4): 10 entries, the last
        // one past the last multiple, so that shutdown adds a checkpoint. The start signs one
        // of its events too.
        let head = Int64(DaemonHarness.startEvents + 8)
        #expect(sizes == Array(Set([Int64(DaemonHarness.startEvents)] + stride(from: 3, through: head, by: 3))).sorted(), "\(sizes)")
        let audit = try #require(try connection.call("admin.auditVerify").result)
        #expect(audit["ok"]?.boolValue == true, "\(audit)")
        #expect(audit["checkpoints"]?.int == sizes.count)
        #expect(audit["problem"] == .null)
        #expect(daemon.stop() == 0)
        #expect(daemon.logLines(message: "log checkpoint").contains { $0.contains("size=\(head)") && $0.contains("reason=shutdown") },
                "shutdown checkpoint logged")
        #expect(daemon.logLines(message: "log checkpoint").filter { $0.contains("reason=entries") }.count == 3)
        try daemon.start()
        let again = try daemon.connect()
        let afterSizes = try exportedCheckpointSizes(again)
        #expect(afterSizes.contains(head), "\(afterSizes)")
        let after = try #require(try again.call("admin.auditVerify").result)
        #expect(after["ok"]?.boolValue == true && after["checkpoints"]?.int == afterSizes.count, "\(after)")
    }

    @Test("a daemon killed (SIGKILL) right after signing left a checkpoint at every multiple: they are made in the batches' transactions")
    func checkpointsSurviveSIGKILL() throws {
        let daemon = try DaemonHarness(config: "[ledger]\ncheckpoint_entries = 2")
        let connection = try daemon.connect()
        try signLevel0(connection, count: 9)
        _ = daemon.stop(signal: SIGKILL)
        try daemon.start()
        let again = try daemon.connect()
        let head = Int64(DaemonHarness.startEvents + 9)
        let sizes = try exportedCheckpointSizes(again)
        #expect(Array(sizes.prefix { $0 <= head }) == Array(stride(from: 2, through: head, by: 2)), "\(sizes)")
        let audit = try #require(try again.call("admin.auditVerify").result)
        #expect(audit["ok"]?.boolValue == true, "\(audit)")
        #expect(try again.call("admin.exportLedger").result?["checkpoints"]?.arrayValue?.isEmpty == true)
    }

    @Test("stepsign-verify ledger checks an export with its checkpoints; --checkpoint catches a cut-off export")
    func verifyWithCheckpointFile() throws {
        let daemon = try DaemonHarness(config: "[ledger]\ncheckpoint_entries = 4")
        let connection = try daemon.connect()
        try signLevel0(connection, count: 9)
        let reply = try #require(try connection.call("getCheckpoint").result)
        let keptNotePath = daemon.directory.appendingPathComponent("kept.note").path
        try #require(reply["checkpoint"]?.stringValue).write(toFile: keptNotePath, atomically: true, encoding: .utf8)
        let (exported, jwks) = try daemon.exportLedgerAndKeys()
        let lines = exported.stdout.split(separator: "\n").map(String.init)
        // Notes of the start's events (2), at 4 and 8 (in the batches), and the head's (11) for
        // getCheckpoint.
        #expect(lines.filter { $0.contains("\"logCheckpoint\"") }.count == 4, "\(lines)")
        #expect(!lines.contains { $0.contains("\"checkpoint\"") }, "\(lines)")
        func verify(_ lines: [String], _ extra: [String] = []) throws -> Tools.Result {
            let path = daemon.directory.appendingPathComponent("export-\(UUID().uuidString).jsonl").path
            try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            return try Tools.run([Binaries.path("stepsign-verify"), "ledger", path, "--keys", jwks, "--checkpoint-entries", "4"] + extra)
        }
        let whole = try verify(lines, ["--checkpoint", keptNotePath])
        #expect(whole.status == 0, "\(whole.stdout)\(whole.stderr)")
        #expect(whole.stdout.contains("\(DaemonHarness.startEvents + 9) entries"), "\(whole.stdout)")
        // The last two entries and every checkpoint line removed: only the kept checkpoint tells.
        let entries = lines.filter { !$0.contains("\"logCheckpoint\"") }
        let cut = Array(entries.dropLast(2))
        let noCheckpoint = try verify(cut, ["--checkpoint-entries", "0"])
        #expect(noCheckpoint.status == 0, "a consistent prefix alone verifies: \(noCheckpoint.stdout)")
        let caughtByNote = try verify(cut, ["--checkpoint-entries", "0", "--checkpoint", keptNotePath])
        #expect(caughtByNote.status == 1, "\(caughtByNote.stdout)")
        #expect(caughtByNote.stdout.contains("fewer than"), "\(caughtByNote.stdout)")
        // With the stretch rule on, the missing checkpoint lines are reported first.
        let stretch = try verify(cut)
        #expect(stretch.status == 1 && stretch.stdout.contains("without a checkpoint"), "\(stretch.stdout)")
    }

    @Test("while entries are added, a checkpoint follows within checkpoint_seconds without anyone asking")
    func timedCheckpoint() throws {
        let daemon = try DaemonHarness(config: "[ledger]\ncheckpoint_seconds = 1")
        let connection = try daemon.connect()
        try signLevel0(connection, count: 2)
        var sizes: [Int64] = []
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            sizes = try exportedCheckpointSizes(connection)
            if sizes.last == Int64(DaemonHarness.startEvents + 2) { break }
            usleep(100_000)
        }
        #expect(sizes.last == Int64(DaemonHarness.startEvents + 2), "\(sizes)")
    }
}
