import Foundation
import StepSignClient
import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import StepSignTestSupport
import Testing

/// Two daemons on one PostgreSQL extend one transparency log (SPEC §5.5): one origin (the
/// first daemon's, which the second takes), checkpoints each signs that the other's published
/// keys verify, a daemon whose view is behind catching up by a consistency proof from the last
/// checkpoint it signed, never forking; a log cut behind both daemons' backs refused by both,
/// and recovered by each (`admin.recover`: a new log epoch per daemon, SPEC §5.5).
@Suite("Transparency log on PostgreSQL", .blocking, .enabled(if: PostgresServer.enabled))
struct PostgresTransparencyLogTests {
    static func sign(_ daemon: DaemonHarness, _ payload: String) throws {
        let reply = try daemon.connect().call("authenticateUserAndSignData", [
            "user": "alice", "payload": payload, "reason": "log", "authLevel": 0, "authenticatorType": 0,
        ])
        try #require(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100, "\(reply.code) \(reply.message)")
    }

    static func checkpoint(_ daemon: DaemonHarness, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> (note: SignedNote, body: LogCheckpoint) {
        let reply = try daemon.connect().call("getCheckpoint")
        let text = try #require(reply.result?["checkpoint"]?.stringValue, "\(reply.code) \(reply.message)",
                                sourceLocation: sourceLocation)
        let note = try SignedNote(parsing: text)
        return (note, try LogCheckpoint(text: note.text))
    }

    /// The database as an older copy restored behind the daemons' backs would leave it: the
    /// entries after the first `keep`, their tree rows and their checkpoints gone.
    static func restoreOlderCopy(_ database: PostgresServer.Database, keeping keep: Int64) throws {
        try database.execute("""
            ALTER TABLE ledger DISABLE TRIGGER ALL; ALTER TABLE ledger_tree DISABLE TRIGGER ALL;
            ALTER TABLE ledger_checkpoints DISABLE TRIGGER ALL; ALTER TABLE log_checkpoints DISABLE TRIGGER ALL;
            DELETE FROM ledger WHERE seq > \(keep);
            DELETE FROM ledger_tree WHERE id >= stepsign_tree_index(0, \(keep));
            DELETE FROM ledger_checkpoints WHERE seq > \(keep); DELETE FROM log_checkpoints WHERE size > \(keep);
            ALTER TABLE ledger ENABLE TRIGGER ALL; ALTER TABLE ledger_tree ENABLE TRIGGER ALL;
            ALTER TABLE ledger_checkpoints ENABLE TRIGGER ALL; ALTER TABLE log_checkpoints ENABLE TRIGGER ALL;
            """)
    }

    /// Two daemons with endorsed keys on a new database, `entries` signatures made on them in
    /// turn; the database is dropped afterwards.
    static func withTwoDaemons(entries: Int, config: String = "",
                               _ body: (DaemonHarness, DaemonHarness, PostgresServer.Database) throws -> Void) throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let root = try ClusterRoot()
        let daemons = try Cluster.startTwo(on: database, config: config, root: root)
        for number in 0..<entries { try sign(daemons[number % 2], "entry \(number)") }
        try body(daemons[0], daemons[1], database)
    }

    @Test("two daemons sign checkpoints of one log under one origin; the one behind catches up by a consistency proof")
    func oneLogTwoDaemons() throws {
        try Self.withTwoDaemons(entries: 6) { a, b, database in
            let first = try Self.checkpoint(b)
            // A's origin, stored first; B was left at the default and takes it.
            let origins = try database.query("SELECT origin FROM log_origin")
            #expect(origins.count == 1 && first.body.origin == origins.first, "\(origins) \(first.body.origin)")
            #expect(first.body.origin.hasSuffix("/host-a"))
            // A's published log keys verify B's checkpoint (B's endorsed P-256 key, type 0x02).
            let keysOnA = try TransparencyLogTests.logKeys(try a.connect())
            #expect(try first.note.verifiedKeys(keysOnA).contains { $0.type == .ecdsa })

            // A signs on; B's view is the checkpoint it signed. B then checkpoints the grown log
            // after proving it extends its own, and A's newer checkpoint agrees with B's.
            for number in 0..<20 { try Self.sign(a, "more \(number)") }
            let onA = try Self.checkpoint(a)
            let proof = try #require(try b.connect().call("getConsistencyProof", ["fromSize": first.body.size]).result)
            let caughtUp = try LogCheckpoint(text: try SignedNote(parsing: try #require(proof["checkpoint"]?.stringValue)).text)
            #expect(caughtUp.size >= onA.body.size)
            let hashes = try TransparencyLogTests.hashes(proof)
            #expect(MerkleProof.verifyConsistency(oldSize: first.body.size, newSize: caughtUp.size, oldRoot: first.body.rootHash,
                                                  newRoot: caughtUp.rootHash, proof: hashes))
            let fromA = try #require(try b.connect().call("getConsistencyProof", ["fromSize": onA.body.size]).result)
            let fromAHashes = try TransparencyLogTests.hashes(fromA)
            #expect(MerkleProof.verifyConsistency(oldSize: onA.body.size, newSize: caughtUp.size, oldRoot: onA.body.rootHash,
                                                  newRoot: caughtUp.rootHash, proof: fromAHashes))
            // Both daemons' notes are stored; each audit checks all of them against the tree.
            let stored = try database.query("SELECT count(DISTINCT instance) FROM log_checkpoints")
            #expect(stored == ["2"])
            for daemon in [a, b] {
                let audit = try #require(try daemon.connect().call("admin.auditVerify").result)
                #expect(audit["ok"]?.boolValue == true, "\(audit)")
            }
        }
    }

    @Test("a log cut behind both daemons' backs (entries and tree, consistently) is refused by both: 15, status says why")
    func cutLogRefusedByBoth() throws {
        try Self.withTwoDaemons(entries: 8) { a, b, database in
            let signedA = try Self.checkpoint(a)
            let signedB = try Self.checkpoint(b)
            let keep = min(signedA.body.size, signedB.body.size) - 3
            try Self.restoreOlderCopy(database, keeping: keep)
            // A signs first: the entry lands below A's checkpoint and is not handed out. B is
            // asked for a checkpoint first: the consistency check refuses it.
            let onCutLog = try a.connect().call("authenticateUserAndSignData", [
                "user": "alice", "payload": "on the cut log", "reason": "log", "authLevel": 0, "authenticatorType": 0,
            ])
            #expect(onCutLog.code == 15, "\(onCutLog.code) \(onCutLog.message)")
            #expect(try b.connect().call("getCheckpoint").code == 15)
            for daemon in [a, b] {
                let connection = try daemon.connect()
                #expect(try connection.call("getCheckpoint").code == 15)
                let status = try #require(try connection.call("status").result)
                #expect(status["logProblem"]?.stringValue?.contains("cut or rolled back") == true, "\(status)")
                let refused = try connection.call("authenticateUserAndSignData", [
                    "user": "alice", "payload": "after", "reason": "log", "authLevel": 0, "authenticatorType": 0,
                ])
                #expect(refused.code == 15, "\(refused.code) \(refused.message)")
            }
        }
    }

    @Test("after a restore that cut both daemons' history, each recovers: two epochs, each naming its loss, then both sign one log")
    func bothDaemonsRecover() throws {
        try Self.withTwoDaemons(entries: 8) { a, b, database in
            let signedA = try Self.checkpoint(a)
            let signedB = try Self.checkpoint(b)
            let keep = min(signedA.body.size, signedB.body.size) - 3
            try Self.restoreOlderCopy(database, keeping: keep)
            for daemon in [a, b] { #expect(try daemon.connect().call("getCheckpoint").code == 15) }

            let onA = try a.connect().call("admin.recover")
            let recoveredA = try #require(onA.result, "\(onA.code) \(onA.message)")
            let first = signedA.body.origin
            #expect(recoveredA["epoch"]?.int == 2 && recoveredA["origin"]?.stringValue == first + "/epoch2")
            #expect(recoveredA["lostFrom"]?.intValue == keep && recoveredA["lostThrough"]?.intValue == signedA.body.size - 1, "\(recoveredA)")
            // A signs on, past B's checkpoint: B's history is still cut, and B still refuses.
            for number in 0..<4 { try Self.sign(a, "epoch 2, \(number)") }
            let grown = try a.connect().call("getCheckpoint")
            let grownNote = try #require(grown.result?["checkpoint"]?.stringValue, "\(grown.code) \(grown.message)")
            #expect(try LogCheckpoint(text: try SignedNote(parsing: grownNote).text).size > signedB.body.size)
            #expect(try b.connect().call("getCheckpoint").code == 15)

            // B recovers too: its loss counts from the size A's epoch found, not from the end.
            let onB = try b.connect().call("admin.recover")
            let recoveredB = try #require(onB.result, "\(onB.code) \(onB.message)")
            #expect(recoveredB["epoch"]?.int == 3 && recoveredB["previousOrigin"]?.stringValue == first + "/epoch2")
            #expect(recoveredB["lostFrom"]?.intValue == keep && recoveredB["lostThrough"]?.intValue == signedB.body.size - 1, "\(recoveredB)")

            // Both sign one log under the newest origin; A's kept checkpoint (epoch 2, below B's
            // event) is still its history; both audits accept the log, epochs and all.
            for number in 0..<2 {
                try Self.sign(a, "epoch 3 on A, \(number)")
                try Self.sign(b, "epoch 3 on B, \(number)")
            }
            #expect(try Self.checkpoint(a).body.origin == first + "/epoch3")
            #expect(try Self.checkpoint(b).body.origin == first + "/epoch3")
            #expect(try database.query("SELECT count(*) FROM log_epochs") == ["2"])
            for daemon in [a, b] {
                let audit = try #require(try daemon.connect().call("admin.auditVerify").result)
                #expect(audit["ok"]?.boolValue == true, "\(audit)")
                #expect(try daemon.connect().call("admin.recover").code == 4)
            }
        }
    }

    @Test("a witness's cosignature added on one daemon is carried by the other's checkpoint of that size, and counts for its status")
    func cosignatureSharedByBothDaemons() throws {
        let witness = try WitnessCosignatureTests.Witness("w1.example")
        try Self.withTwoDaemons(entries: 4, config: "[ledger]\nwitness_quorum = 1\n" + witness.config) { a, b, _ in
            let onB = try #require(try b.connect().call("getCheckpoint").result?["checkpoint"]?.stringValue)
            let size = try LogCheckpoint(text: try SignedNote(parsing: onB).text).size
            #expect(try b.connect().call("status").result?["witnessed"]?.boolValue == false)
            let added = try a.connect().call("admin.addCosignatures", ["treeSize": size, "cosignatures": [try witness.line(onB)]])
            #expect(added.code == 0, "\(added.code) \(added.message)")
            let carried = try SignedNote(parsing: try #require(try b.connect().call("getCheckpoint").result?["checkpoint"]?.stringValue))
            #expect(carried.cosigners([witness.vkey]).count == 1)
            #expect(try b.connect().call("status").result?["witnessed"]?.boolValue == true)
        }
    }
}
