import Foundation
import StepSignClient
import StepSignFormat
import StepSignProtocol
import StepSignTestSupport
import Testing

/// Roots from entries, never from stored nodes alone (SPEC §5.5), on the real daemon and its
/// SQLite file: an attacker with write access who swaps two entries and re-chains the ledger,
/// or who edits one stored tree node, gets signing refused (15, `logProblem`, a critical line),
/// never a checkpoint whose root does not match the entries, whether the daemon was stopped or
/// running.
@Suite("Roots from entries", .blocking)
struct RootsFromEntriesTests {
    /// Never a timed checkpoint in these tests: each checkpoint is asked for.
    static let config = "[ledger]\ncheckpoint_entries = 1000\ncheckpoint_seconds = 86400"

    /// Swaps the entries `seq` and `seq + 1` of a SQLite ledger and re-chains every entry, as an
    /// attacker with the file would; the tree is left as it was.
    static let swapScript = """
        import sqlite3, hashlib, sys
        db = sqlite3.connect(sys.argv[1])
        for trigger in ("ledger_no_update", "ledger_no_delete"):
            db.execute("DROP TRIGGER IF EXISTS " + trigger)
        a = int(sys.argv[2])
        cols = ["signature_id", "user_name", "iat", "kid", "jws", "peer_uid", "peer_pid", "peer_comm", "auth_level", "created_at"]
        rows = {seq: db.execute("SELECT " + ", ".join(cols) + " FROM ledger WHERE seq = ?", (seq,)).fetchone() for seq in (a, a + 1)}
        db.execute("UPDATE ledger SET signature_id = signature_id || '-swap' WHERE seq IN (?, ?)", (a, a + 1))
        for seq, other in ((a, a + 1), (a + 1, a)):
            db.execute("UPDATE ledger SET " + ", ".join(c + " = ?" for c in cols) + " WHERE seq = ?", rows[other] + (seq,))
        prev = bytes(32)
        for seq, jws in db.execute("SELECT seq, jws FROM ledger ORDER BY seq").fetchall():
            entry = hashlib.sha256(prev + hashlib.sha256(jws.encode()).digest()).digest()
            db.execute("UPDATE ledger SET prev_hash = ?, entry_hash = ? WHERE seq = ?", (prev, entry, seq))
            prev = entry
        db.commit()
        print(db.total_changes)
        """

    /// Gives one stored tree node (its storage index) another hash.
    static let editNodeScript = """
        import sqlite3, sys
        db = sqlite3.connect(sys.argv[1])
        db.execute("DROP TRIGGER IF EXISTS ledger_tree_no_update")
        db.execute("UPDATE ledger_tree SET hash = zeroblob(32) WHERE id = ?", (int(sys.argv[2]),))
        db.commit()
        print(db.total_changes)
        """

    /// Prints one line per stored C2SP checkpoint: its size, and whether its root is the root of
    /// the tree of the ledger's first `size` entries as they are stored now.
    static let notesScript = """
        import sqlite3, hashlib, sys, base64
        db = sqlite3.connect(sys.argv[1])
        leaves = [hashlib.sha256(b"\\x00" + jws.encode()).digest() for (jws,) in db.execute("SELECT jws FROM ledger ORDER BY seq")]
        def root(hashes):
            if len(hashes) == 1:
                return hashes[0]
            k = 1
            while k * 2 < len(hashes):
                k *= 2
            return hashlib.sha256(b"\\x01" + root(hashes[:k]) + root(hashes[k:])).digest()
        for size, note in db.execute("SELECT size, note FROM log_checkpoints ORDER BY size, instance"):
            lines = note.split("\\n")
            print(size, "match" if size <= len(leaves) and base64.b64decode(lines[2]) == root(leaves[:size]) else "mismatch")
        """

    static func sign(_ connection: StepSignConnection, _ payload: String) throws -> ClientReply {
        try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": payload, "reason": "log", "authLevel": 0, "authenticatorType": 0,
        ])
    }

    static func run(_ script: String, _ daemon: DaemonHarness, _ argument: Int64, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try Tools.python(script, daemon.stateDirectory + "/stepsign.sqlite", "\(argument)")
        try #require(result.status == 0 && !result.stdout.hasPrefix("0"), "\(result.stdout) \(result.stderr)",
                     sourceLocation: sourceLocation)
    }

    /// The stored notes as (size, whether the root matches the entries stored now).
    static func notes(_ daemon: DaemonHarness) throws -> [String] {
        let result = try Tools.python(notesScript, daemon.stateDirectory + "/stepsign.sqlite")
        try #require(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    /// Signing refused, `logProblem` set, one critical line: the end every attack must reach.
    static func expectRefused(_ daemon: DaemonHarness, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let connection = try daemon.connect()
        let checkpoint = try connection.call("getCheckpoint")
        #expect(checkpoint.code == 15, "\(checkpoint.code) \(checkpoint.message)", sourceLocation: sourceLocation)
        let refused = try sign(connection, "after the attack")
        #expect(refused.code == 15, "\(refused.code) \(refused.message)", sourceLocation: sourceLocation)
        let problem = try connection.call("status").result?["logProblem"]?.stringValue
        #expect(problem?.isEmpty == false, "\(problem ?? "no logProblem")", sourceLocation: sourceLocation)
        #expect(daemon.log.components(separatedBy: "\n").contains { $0.contains("level=critical") && $0.contains("Merkle tree") },
                sourceLocation: sourceLocation)
    }

    @Test("entries swapped and re-chained while the daemon was stopped: signing refused at start, no checkpoint over them")
    func swapWhileStopped() throws {
        let daemon = try DaemonHarness(config: Self.config)
        let connection = try daemon.connect()
        for number in 1...8 { #expect(try Self.sign(connection, "entry \(number)").code == 0) }
        #expect(daemon.stop() == 0)
        let before = try Self.notes(daemon)
        try Self.run(Self.swapScript, daemon, 4)
        try daemon.start()
        try Self.expectRefused(daemon)
        #expect(try Self.notes(daemon).count == before.count, "no checkpoint was signed over the swapped entries")
    }

    @Test("entries swapped and re-chained behind the running daemon's back: the next signing is refused, no checkpoint over them")
    func swapWhileRunning() throws {
        let daemon = try DaemonHarness(config: Self.config)
        let connection = try daemon.connect()
        for number in 1...8 { #expect(try Self.sign(connection, "entry \(number)").code == 0) }
        let before = try Self.notes(daemon)
        try Self.run(Self.swapScript, daemon, 4)
        try Self.expectRefused(daemon)
        #expect(try Self.notes(daemon).count == before.count, "no checkpoint was signed over the swapped entries")
    }

    @Test("a kept chain head that cannot be read: the daemon starts and signs, and says the head's check is off (it was silent)")
    func unreadableHeadIsWarned() throws {
        let daemon = try DaemonHarness(config: Self.config)
        let connection = try daemon.connect()
        for number in 1...3 { #expect(try Self.sign(connection, "entry \(number)").code == 0) }
        #expect(try connection.call("getCheckpoint").code == 0)
        #expect(daemon.stop() == 0)
        let head = daemon.stateDirectory + "/keys/log-checkpoint.head"
        try #require(FileManager.default.fileExists(atPath: head), "a checkpoint keeps the chain head beside it")
        try "not a head\n".write(toFile: head, atomically: false, encoding: .utf8)
        try daemon.start()
        let again = try daemon.connect()
        #expect(try Self.sign(again, "after the head was damaged").code == 0)
        #expect(try again.call("getCheckpoint").code == 0)
        #expect(daemon.log.contains("the log's kept chain head cannot be read"), "no warning for the damaged head")
    }

    /// A log of 12 entries whose last checkpoint this daemon keeps is of 8, so that the
    /// subtree of leaves 8…11 is stored but under no checkpoint: a node an attacker edits
    /// there is used alike by the root and by the consistency proof the store reads.
    static func twelveEntriesCheckpointedAtEight(_ daemon: DaemonHarness) throws {
        let connection = try daemon.connect()
        for number in 1...6 { #expect(try Self.sign(connection, "entry \(number)").code == 0) }
        let kept = try connection.call("getCheckpoint")
        let note = try #require(kept.result?["checkpoint"]?.stringValue, "\(kept.code) \(kept.message)")
        try #require(try LogCheckpoint(text: try SignedNote(parsing: note).text).size == 8)
        for number in 7...10 { #expect(try Self.sign(connection, "entry \(number)").code == 0) }
    }

    @Test("a stored tree node edited while the daemon was down (killed): signing refused at start, every checkpoint's root matches the entries")
    func nodeEditedWhileStopped() throws {
        let daemon = try DaemonHarness(config: Self.config)
        try Self.twelveEntriesCheckpointedAtEight(daemon)
        daemon.stop(signal: SIGKILL)
        try Self.run(Self.editNodeScript, daemon, MerkleNode(level: 2, index: 2).storageIndex)
        try daemon.start()
        try Self.expectRefused(daemon)
        let notes = try Self.notes(daemon)
        #expect(!notes.isEmpty && notes.allSatisfy { $0.hasSuffix(" match") }, "\(notes)")
    }

    @Test("a stored tree node edited behind the running daemon's back: no checkpoint over it, signing refused, every checkpoint's root matches the entries")
    func nodeEditedWhileRunning() throws {
        let daemon = try DaemonHarness(config: Self.config)
        try Self.twelveEntriesCheckpointedAtEight(daemon)
        try Self.run(Self.editNodeScript, daemon, MerkleNode(level: 2, index: 2).storageIndex)
        // A signing may land (its entry is right); no checkpoint may be made of the edited tree.
        _ = try Self.sign(try daemon.connect(), "after the edit")
        try Self.expectRefused(daemon)
        let notes = try Self.notes(daemon)
        #expect(!notes.isEmpty && notes.allSatisfy { $0.hasSuffix(" match") }, "\(notes)")
    }

    @Test("a stored node on the path of the proof from the kept checkpoint, edited while the daemon runs: the batch that reaches a checkpoint is refused, nothing committed")
    func nodeOnTheProofPathEditedBeforeABatchCheckpoint() throws {
        let daemon = try DaemonHarness(config: "[ledger]\ncheckpoint_entries = 4\ncheckpoint_seconds = 86400")
        let connection = try daemon.connect()
        // The log starts with two events (the user's, the key's): entries 3…6 are signatures.
        for number in 3...6 { #expect(try Self.sign(connection, "entry \(number)").code == 0) }
        // A checkpoint of 6 entries is kept (4 was made with its batch), then entry 7.
        let kept = try connection.call("getCheckpoint")
        let note = try #require(kept.result?["checkpoint"]?.stringValue, "\(kept.code) \(kept.message)")
        try #require(try LogCheckpoint(text: try SignedNote(parsing: note).text).size == 6)
        #expect(try Self.sign(connection, "entry 7").code == 0)
        // The subtree of leaves 4…5 is below the next batch's tail and on the path of the proof
        // from 6 to 8 that entry 8's checkpoint needs.
        try Self.run(Self.editNodeScript, daemon, MerkleNode(level: 1, index: 2).storageIndex)
        let refused = try Self.sign(connection, "entry 8")
        #expect(refused.code == 15, "\(refused.code) \(refused.message)")
        let count = try Tools.python("import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM ledger').fetchone()[0])",
                                     daemon.stateDirectory + "/stepsign.sqlite")
        #expect(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "7", "nothing committed: \(count.stdout)")
        try Self.expectRefused(daemon)
        let notes = try Self.notes(daemon)
        #expect(!notes.isEmpty && notes.allSatisfy { $0.hasSuffix(" match") } && !notes.contains { $0.hasPrefix("8 ") }, "\(notes)")
    }
}
