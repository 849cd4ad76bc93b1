import Foundation
import StepSignClient
import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import StepSignTestSupport
import Synchronization
import Testing

/// The ledger as a transparency log, on the real daemon (SPEC §5.5): every signature's
/// `logIndex` and inclusion proof check offline against a C2SP checkpoint signed by the keys
/// `getPublicKeys` publishes; consistency proofs join checkpoints; and a database rewritten
/// consistently behind the daemon's back (chain and tree recomputed) gets no checkpoint and
/// no signature, because the daemon checks the log against the checkpoint it kept itself.
@Suite("Transparency log", .blocking)
struct TransparencyLogTests {
    static func signLevel0(_ connection: StepSignConnection, _ payload: String) throws -> JSONValue {
        let reply = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": payload, "reason": "log", "authLevel": 0, "authenticatorType": 0,
        ])
        return try #require(reply.event("onAuthenticateUserAndSignData")?["details"])
    }

    /// The published note verifier keys.
    static func logKeys(_ connection: StepSignConnection) throws -> [NoteVerifierKey] {
        let keys = try #require(try connection.call("getPublicKeys").result?["logKeys"]?.arrayValue)
        return try keys.map { try NoteVerifierKey(try #require($0.stringValue)) }
    }

    /// The checkpoint of a proof reply, its signatures checked against `keys`.
    static func checkpoint(_ result: JSONValue, keys: [NoteVerifierKey]) throws -> LogCheckpoint {
        let note = try SignedNote(parsing: try #require(result["checkpoint"]?.stringValue))
        #expect(try note.verifiedKeys(keys).count == 2, "the log key and the signing key both sign")
        return try LogCheckpoint(text: note.text)
    }

    static func hashes(_ result: JSONValue) throws -> [[UInt8]] {
        let strings = try #require(result["hashes"]?.arrayValue).compactMap(\.stringValue)
        let hashes = strings.compactMap { Base64.decode($0) }
        try #require(hashes.count == strings.count, "hashes are base64")
        return hashes
    }

    @Test("each signature's logIndex and inclusion proof check offline against a checkpoint of the published keys")
    func inclusionProofs() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        let keys = try Self.logKeys(connection)
        #expect(Set(keys.map(\.type)) == [.ed25519, .ecdsa])
        #expect(keys.allSatisfy { $0.name.hasPrefix("stepsign.") && $0.name.hasSuffix("/stepsign-test") })
        let pemKeys = try #require(try connection.call("getPublicKeys", ["format": "pem"]).result?["logKeys"]?.arrayValue)
        #expect(pemKeys.compactMap(\.stringValue) == keys.map(\.description))
        let signed = try (1...7).map { try Self.signLevel0(connection, "entry \($0)") }
        for (number, details) in signed.enumerated() {
            let index = Int64(try #require(details["logIndex"]?.int))
            #expect(index == Int64(DaemonHarness.startEvents + number))
            let id = try #require(details["dataSignatureID"]?.stringValue)
            let jws = try #require(details["payloadSignature"]?.stringValue)
            let proof = try #require(try connection.call("getInclusionProof", ["signatureID": id]).result)
            #expect(proof["logIndex"]?.int == Int(index))
            let checkpoint = try Self.checkpoint(proof, keys: keys)
            #expect(checkpoint.origin == keys[0].name)
            #expect(proof["treeSize"]?.int == Int(checkpoint.size))
            #expect(MerkleProof.verifyInclusion(leafHash: MerkleHash.leaf(Array(jws.utf8)), index: index, size: checkpoint.size,
                                                proof: try Self.hashes(proof), root: checkpoint.rootHash))
            // Another JWS is not that leaf.
            #expect(!MerkleProof.verifyInclusion(leafHash: MerkleHash.leaf(Array((jws + "x").utf8)), index: index,
                                                 size: checkpoint.size, proof: try Self.hashes(proof), root: checkpoint.rootHash))
        }
        // Bad requests: an unknown ID, a size below the entry or past the log.
        #expect(try connection.call("getInclusionProof", ["signatureID": "nope"]).code == 4)
        let first = try #require(signed[0]["dataSignatureID"]?.stringValue)
        #expect(try connection.call("getInclusionProof", ["signatureID": first, "treeSize": 1]).code == 4)
        #expect(try connection.call("getInclusionProof", ["signatureID": first, "treeSize": 1000]).code == 4)
    }

    @Test("a consistency proof joins an older checkpoint to a newer one")
    func consistencyProofs() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        let keys = try Self.logKeys(connection)
        for number in 1...3 { _ = try Self.signLevel0(connection, "before \(number)") }
        let older = try Self.checkpoint(try #require(try connection.call("getConsistencyProof", ["fromSize": 0]).result), keys: keys)
        for number in 1...6 { _ = try Self.signLevel0(connection, "after \(number)") }
        let reply = try #require(try connection.call("getConsistencyProof", ["fromSize": Int(older.size)]).result)
        let newer = try Self.checkpoint(reply, keys: keys)
        #expect(newer.size == older.size + 6)
        #expect(MerkleProof.verifyConsistency(oldSize: older.size, newSize: newer.size, oldRoot: older.rootHash,
                                              newRoot: newer.rootHash, proof: try Self.hashes(reply)))
        // Sizes the log cannot prove: past its end, from above the target.
        #expect(try connection.call("getConsistencyProof", ["fromSize": 1, "toSize": 1000]).code == 4)
        #expect(try connection.call("getConsistencyProof", ["fromSize": 5, "toSize": 4]).code == 4)
    }

    /// Rewrites entry 3's JWS in the stopped daemon's SQLite file and recomputes, as an attacker
    /// with the file would, the whole chain and the whole Merkle tree, so both are consistent.
    static let rewriteScript = """
        import sqlite3, hashlib, sys
        db = sqlite3.connect(sys.argv[1])
        for trigger in ("ledger_no_update", "ledger_no_delete", "ledger_tree_no_delete"):
            db.execute("DROP TRIGGER IF EXISTS " + trigger)
        if sys.argv[2] == "rewrite":
            db.execute("UPDATE ledger SET jws = jws || 'x' WHERE seq = 3")
        else:  # a rolled-back copy: the newest entries gone, chain and tree as they were then
            db.execute("DELETE FROM ledger WHERE seq > ?", (int(sys.argv[2]),))
        prev, leaves = bytes(32), []
        for seq, jws in db.execute("SELECT seq, jws FROM ledger ORDER BY seq").fetchall():
            entry = hashlib.sha256(prev + hashlib.sha256(jws.encode()).digest()).digest()
            db.execute("UPDATE ledger SET prev_hash = ?, entry_hash = ? WHERE seq = ?", (prev, entry, seq))
            prev = entry
            leaves.append(hashlib.sha256(b"\\x00" + jws.encode()).digest())
        def storage_index(level, n):
            for _ in range(level):
                n = 2 * n + 1
            position = 0
            while n > 0:
                position, n = position + n, n >> 1
            return position + level
        db.execute("DELETE FROM ledger_tree")
        level, nodes = 0, leaves
        while nodes:
            db.executemany("INSERT INTO ledger_tree (id, hash) VALUES (?, ?)",
                           [(storage_index(level, i), h) for i, h in enumerate(nodes)])
            nodes = [hashlib.sha256(b"\\x01" + nodes[i] + nodes[i + 1]).digest() for i in range(0, len(nodes) - 1, 2)]
            level += 1
        db.commit()
        """

    @Test("a log rewritten consistently while the daemon was down is refused: no checkpoint, no signature, status says why")
    func neverTwoHistories() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        for number in 1...5 { _ = try Self.signLevel0(connection, "entry \(number)") }
        // A checkpoint of the whole log, kept by the daemon outside the database.
        _ = try #require(try connection.call("getConsistencyProof", ["fromSize": 0]).result)
        #expect(daemon.stop() == 0)
        let rewritten = try Tools.python(Self.rewriteScript, daemon.stateDirectory + "/stepsign.sqlite", "rewrite")
        try #require(rewritten.status == 0, "\(rewritten.stderr)")
        try daemon.start()
        let again = try daemon.connect()
        let status = try #require(try again.call("status").result)
        #expect(status["logProblem"]?.stringValue?.contains("does not extend the checkpoint") == true, "\(status)")
        let refused = try again.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "after", "reason": "log", "authLevel": 0, "authenticatorType": 0,
        ])
        #expect(refused.code == 15, "\(refused)")
        #expect(try again.call("getConsistencyProof", ["fromSize": 0]).code == 15)
        // The audit still runs, and says the rewritten entry's checkpoint no longer matches.
        #expect(try again.call("admin.auditVerify").result?["ok"]?.boolValue == false)
        #expect(daemon.log.components(separatedBy: "\n").filter { $0.contains("level=critical") && $0.contains("Merkle tree") }.count == 1)
    }

    @Test("a rolled-back copy of the log (the newest entries gone, chain and tree as they were) is refused, and the daemon keeps serving")
    func rolledBackCopy() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        for number in 1...5 { _ = try Self.signLevel0(connection, "entry \(number)") }
        _ = try #require(try connection.call("getConsistencyProof", ["fromSize": 0]).result)
        #expect(daemon.stop() == 0)
        let rolledBack = try Tools.python(Self.rewriteScript, daemon.stateDirectory + "/stepsign.sqlite", "4")
        try #require(rolledBack.status == 0, "\(rolledBack.stderr)")
        try daemon.start()
        let again = try daemon.connect()
        let status = try #require(try again.call("status").result)
        #expect(status["logProblem"]?.stringValue?.contains("cut or rolled back") == true, "\(status)")
        let refused = try again.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "after", "reason": "log", "authLevel": 0, "authenticatorType": 0,
        ])
        #expect(refused.code == 15, "\(refused)")
        #expect(try again.call("admin.auditVerify").code == 0)
    }

    @Test("checkpoints asked for while many connections sign and batches sign their own (a witness's pusher) are no cut: every signature and proof is answered, every multiple has its note, the kept one is the newest")
    func checkpointsDuringLoadAreNoCut() throws {
        // Batches sign a checkpoint in their transaction every 3 entries while the pusher's
        // asks make others between them: both kinds race for the kept checkpoint.
        let daemon = try DaemonHarness(config: "[ledger]\ncheckpoint_entries = 3")
        let failures = Mutex<[String]>([])
        let proofFailures = Mutex<[String]>([])
        let group = DispatchGroup()
        let stop = Atomic<Bool>(false)
        let proofsAnswered = Atomic<Int>(0)
        // The signers start once the pusher has its first answer, so its asks overlap them.
        let pusherAnswered = DispatchSemaphore(value: 0)
        // One connection asks for the head's checkpoint again and again, as the pusher does;
        // a connection refused or lost is a failure of the test, not the end of the pusher.
        DispatchQueue.global().async(group: group) {
            defer { pusherAnswered.signal() }
            do {
                let connection = try daemon.connect()
                repeat {
                    let reply = try connection.call("getConsistencyProof", ["fromSize": 0])
                    if reply.code != 0 { proofFailures.withLock { $0.append("\(reply.code) \(reply.message)") } }
                    if proofsAnswered.add(1, ordering: .relaxed).newValue == 1 { pusherAnswered.signal() }
                } while !stop.load(ordering: .relaxed)
            } catch {
                proofFailures.withLock { $0.append("the pusher's connection: \(error)") }
            }
        }
        pusherAnswered.wait()
        DispatchQueue.concurrentPerform(iterations: 16) { worker in
            guard let connection = try? daemon.connect() else {
                failures.withLock { $0.append("no connection") }
                return
            }
            for number in 0..<40 {
                let reply = try? connection.call("authenticateUserAndSignData", [
                    "user": "alice", "payload": "load \(worker) \(number)", "reason": "log", "authLevel": 0,
                    "authenticatorType": 0,
                ])
                if reply?.event("onAuthenticateUserAndSignData") == nil {
                    failures.withLock { $0.append("\(reply.map { "\($0.code) \($0.message)" } ?? "no reply")") }
                }
            }
        }
        stop.store(true, ordering: .relaxed)
        group.wait()
        let seen = failures.withLock { $0 }
        #expect(seen.isEmpty, "\(seen.count) signings failed, first: \(seen.first ?? "")")
        let proofs = proofFailures.withLock { $0 }
        #expect(proofs.isEmpty, "\(proofs.count) proofs refused, first: \(proofs.first ?? "")")
        #expect(proofsAnswered.load(ordering: .relaxed) >= 1, "the pusher was answered")
        let connection = try daemon.connect()
        let status = try #require(try connection.call("status").result)
        #expect(status["logProblem"] == nil || status["logProblem"] == .null, "\(status)")
        let audit = try #require(try connection.call("admin.auditVerify").result)
        #expect(audit["ok"]?.boolValue == true, "\(audit)")
        let sizes = try Self.exportedNotes(connection, keys: try Self.logKeys(connection)).map(\.size)
        let head = Int64(try daemon.ledgerEntries().count)
        let multiples = Array(stride(from: 3, through: head, by: 3))
        #expect(multiples.allSatisfy(sizes.contains), "missing: \(multiples.filter { !sizes.contains($0) })")
        let kept = try SignedNote(parsing: try String(contentsOfFile: daemon.stateDirectory + "/keys/log-checkpoint", encoding: .utf8))
        #expect(try LogCheckpoint(text: kept.text).size == sizes.max())
        #expect(!FileManager.default.fileExists(atPath: daemon.stateDirectory + "/keys/log-checkpoint.pending"))
    }

    /// The log's C2SP checkpoints in an export, by size, each checked against `keys`.
    static func exportedNotes(_ connection: StepSignConnection, keys: [NoteVerifierKey]) throws -> [LogCheckpoint] {
        let notes = try #require(try connection.call("admin.exportLedger").result?["logCheckpoints"]?.arrayValue)
        return try notes.map { value in
            let note = try SignedNote(parsing: try #require(value.stringValue))
            #expect(try note.verifiedKeys(keys).count == 2)
            return try LogCheckpoint(text: note.text)
        }
    }

    @Test("C2SP checkpoints are made when SPEC 5.3 says (every checkpoint_entries, shutdown), stored, exported and logged")
    func notesAtTheLedgersMoments() throws {
        let daemon = try DaemonHarness(config: "[ledger]\ncheckpoint_entries = 3")
        let connection = try daemon.connect()
        let keys = try Self.logKeys(connection)
        for number in 1...7 { _ = try Self.signLevel0(connection, "entry \(number)") }
        // After the commit that passes a multiple of 3, not inside it: wait for the note.
        let deadline = Date().addingTimeInterval(30)
        var sizes: [Int64] = []
        while Date() < deadline {
            sizes = try Self.exportedNotes(connection, keys: keys).map(\.size)
            if sizes.contains(where: { $0 >= 6 }) { break }
            usleep(50_000)
        }
        #expect(sizes.contains(where: { $0 >= 6 }), "\(sizes)")
        #expect(sizes == sizes.sorted())
        let head = Int64(DaemonHarness.startEvents + 7)
        #expect(daemon.stop() == 0)
        #expect(daemon.log.contains("log checkpoint"))
        try daemon.start()
        let again = try daemon.connect()
        let after = try Self.exportedNotes(again, keys: keys).map(\.size)
        #expect(after.contains(head), "the shutdown's note of the head: \(after)")
        let audit = try #require(try again.call("admin.auditVerify").result)
        #expect(audit["ok"]?.boolValue == true, "\(audit)")
    }

    @Test("one log, one origin: another ledger.origin is exit 78; the default takes the log's")
    func oneOriginPerLog() throws {
        let daemon = try DaemonHarness(config: "[ledger]\norigin = \"a.example/log\"")
        _ = try Self.signLevel0(try daemon.connect(), "entry")
        #expect(daemon.stop() == 0)
        try DaemonHarness.writeConfig(DaemonHarness.config("[ledger]\norigin = \"b.example/log\""), to: daemon.configPath)
        let refused = try Tools.run([Binaries.path("stepsignd"), "--config", daemon.configPath, "--socket", daemon.socketPath,
                                     "--state-dir", daemon.stateDirectory])
        #expect(refused.status == 78, "\(refused.stderr)")
        #expect(refused.stderr.contains("a.example/log") && refused.stderr.contains("b.example/log"), "\(refused.stderr)")
        // The default (empty) origin: the log's is used, so a renamed host goes on with its log.
        try DaemonHarness.writeConfig(DaemonHarness.config(""), to: daemon.configPath)
        try daemon.start()
        let note = try #require(try daemon.connect().call("getCheckpoint").result?["checkpoint"]?.stringValue)
        #expect(try LogCheckpoint(text: try SignedNote(parsing: note).text).origin == "a.example/log")
        let keys = try #require(try daemon.connect().call("getPublicKeys").result?["logKeys"]?.arrayValue)
        #expect(keys.allSatisfy { $0.stringValue?.hasPrefix("a.example/log+") == true }, "\(keys)")
    }

    /// The tlog-proof of `signatureID`, as `stepsign proof` writes it.
    static func proof(_ connection: StepSignConnection, _ signatureID: String) throws -> TlogProof {
        let result = try #require(try connection.call("getInclusionProof", ["signatureID": signatureID]).result)
        return try TlogProof(index: try #require(result["logIndex"]?.intValue), hashes: try Self.hashes(result),
                             checkpoint: try SignedNote(parsing: try #require(result["checkpoint"]?.stringValue)))
    }

    @Test("a stored tree node edited behind the running daemon's back: the proof through it is refused (15), status names the problem, nothing more is signed; a proof checked right is still served")
    func editedTreeNodeStopsSigning() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        let signed = try (1...8).map { try Self.signLevel0(connection, "entry \($0)") }
        let first = try #require(signed[0]["dataSignatureID"]?.stringValue)
        let last = try #require(signed[7]["dataSignatureID"]?.stringValue)
        #expect(try connection.call("getInclusionProof", ["signatureID": first]).code == 0)
        // The subtree of leaves 0 and 1 (the start's events; on the path of the first
        // signature's proof, leaf 2) gets another hash.
        let node = MerkleNode(level: 1, index: 0).storageIndex
        let edited = try Tools.python("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.executescript("DROP TRIGGER ledger_tree_no_update")
            db.execute("UPDATE ledger_tree SET hash = zeroblob(32) WHERE id = ?", (int(sys.argv[2]),))
            db.commit()
            print(db.total_changes)
            """, daemon.stateDirectory + "/stepsign.sqlite", "\(node)")
        #expect(edited.status == 0 && edited.stdout.hasPrefix("1"), "\(edited.stdout) \(edited.stderr)")
        #expect(try connection.call("getInclusionProof", ["signatureID": first]).code == 15)
        #expect(try connection.call("status").result?["logProblem"]?.stringValue?.contains("stored node") == true)
        // A proof that does not pass through the edited node is still right, and checked, and served.
        #expect(try connection.call("getInclusionProof", ["signatureID": last]).code == 0)
        let refused = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "after", "reason": "log", "authLevel": 0, "authenticatorType": 0,
        ])
        #expect(refused.code == 15)
    }

    /// The keys' text forms, sorted: for comparing sets of keys.
    static func names(_ keys: [NoteVerifierKey]) -> [String] { keys.map(\.description).sorted() }

    /// The Ed25519 log keys among `keys`.
    static func ed25519(_ keys: [NoteVerifierKey]) -> [NoteVerifierKey] { keys.filter { $0.type == .ed25519 } }

    /// The latest checkpoint (`getCheckpoint`) and the Ed25519 keys of `keys` that signed it.
    static func headSigners(_ connection: StepSignConnection, _ keys: [NoteVerifierKey]) throws -> (size: Int64, signers: [NoteVerifierKey]) {
        let note = try SignedNote(parsing: try #require(try connection.call("getCheckpoint").result?["checkpoint"]?.stringValue))
        return (try LogCheckpoint(text: note.text).size, try ed25519(note.verifiedKeys(keys)))
    }

    @Test("the log key outlives a signing key's rotation and revocation (SPEC 2): witnesses and verifiers holding it never lose the log")
    func logKeyOutlivesSigningKeys() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        let first = try Self.signLevel0(connection, "before")
        let jws = try #require(first["payloadSignature"]?.stringValue)
        let before = try Self.proof(connection, try #require(first["dataSignatureID"]?.stringValue))
        let logKey = try #require(Self.ed25519(try Self.logKeys(connection)).first)
        #expect(Self.ed25519(try Self.logKeys(connection)) == [logKey])

        let oldKid = try #require(try connection.call("status").result?["activeKid"]?.stringValue)
        #expect(try connection.call("admin.rotateKey").code == 0)
        #expect(try connection.call("admin.revokeKey", ["kid": oldKid]).code == 0)
        let second = try Self.signLevel0(connection, "after")
        let after = try Self.proof(connection, try #require(second["dataSignatureID"]?.stringValue))
        // A verifier (or a witness) that holds only the log key checks both proofs.
        #expect(throws: Never.self) { try before.verify(leaf: Array(jws.utf8), logKeys: [logKey]) }
        #expect(throws: Never.self) {
            try after.verify(leaf: Array(try #require(second["payloadSignature"]?.stringValue).utf8), logKeys: [logKey])
        }
        #expect(Self.ed25519(try Self.logKeys(connection)) == [logKey])

        #expect(daemon.stop() == 0)
        try daemon.start()
        let restarted = try daemon.connect()
        #expect(Self.ed25519(try Self.logKeys(restarted)) == [logKey])
        #expect(try Self.headSigners(restarted, [logKey]).signers == [logKey])
        let retired = try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory + "/keys").filter { $0.hasSuffix(".retired") }
        #expect(retired.isEmpty, "\(retired)")
    }

    @Test("admin.rotateLogKey: both keys sign every note until the overlap ends, then the new one alone; old proofs keep verifying; a restart keeps the overlap")
    func logKeyRotationOverlaps() throws {
        let daemon = try DaemonHarness(config: "[ledger]\nlog_key_overlap_entries = 4")
        let connection = try daemon.connect()
        let first = try Self.signLevel0(connection, "before")
        let jws = try #require(first["payloadSignature"]?.stringValue)
        let before = try Self.proof(connection, try #require(first["dataSignatureID"]?.stringValue))
        let old = try #require(Self.ed25519(try Self.logKeys(connection)).first)

        let rotated = try connection.call("admin.rotateLogKey")
        #expect(rotated.code == 0)
        let size = try Self.headSigners(connection, [old]).size
        let until = try #require(rotated.result?["overlapUntilSize"]?.intValue)
        #expect(until == size + 4)
        let published = Self.ed25519(try Self.logKeys(connection))
        #expect(published.count == 2 && published.contains(old))
        let new = try #require(published.first { $0 != old })
        #expect(rotated.result?["logKeys"]?.arrayValue?.compactMap(\.stringValue).sorted() == published.map(\.description).sorted())

        // Within the overlap: a witness holding either key, or both, accepts every note made now.
        _ = try Self.signLevel0(connection, "within")
        var head = try Self.headSigners(connection, published)
        #expect(head.size > size && Self.names(head.signers) == Self.names([old, new]), "size \(head.size)")
        #expect(daemon.stop() == 0)
        try daemon.start()
        let restarted = try daemon.connect()
        head = try Self.headSigners(restarted, published)
        #expect(head.size < until && Self.names(head.signers) == Self.names([old, new]), "the overlap outlives a restart (size \(head.size))")

        // Past it: the new key alone; the old one stays published for older notes.
        while try Self.headSigners(restarted, published).size < until { _ = try Self.signLevel0(restarted, "past") }
        head = try Self.headSigners(restarted, published)
        #expect(head.signers == [new], "size \(head.size)")
        #expect(Self.names(Self.ed25519(try Self.logKeys(restarted))) == Self.names([old, new]))
        #expect(throws: Never.self) { try before.verify(leaf: Array(jws.utf8), logKeys: [old]) }
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: daemon.stateDirectory + "/keys/log-key-overlap")[.posixPermissions] as? Int)
        #expect(mode == 0o600)
    }
}
