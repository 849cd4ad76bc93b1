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
/// checkpoint it signed, never forking; and a log cut behind both daemons' backs refused by both.
@Suite("Transparency log on PostgreSQL", .enabled(if: PostgresServer.enabled), .serialized)
struct PostgresTransparencyLogTests {
    static func sign(_ daemon: DaemonHarness, _ payload: String) throws {
        let reply = try daemon.connect().call("authenticateUserAndSignData", [
            "user": "alice", "payload": payload, "reason": "log", "authLevel": 0, "authenticatorType": 0,
        ])
        try #require(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100, "\(reply.code) \(reply.message)")
    }

    static func checkpoint(_ daemon: DaemonHarness) throws -> (note: SignedNote, body: LogCheckpoint) {
        let text = try #require(try daemon.connect().call("getCheckpoint").result?["checkpoint"]?.stringValue)
        let note = try SignedNote(parsing: text)
        return (note, try LogCheckpoint(text: note.text))
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
            // The newest entries removed with their tree rows, as a restored older copy would be.
            try database.execute("""
                ALTER TABLE ledger DISABLE TRIGGER ALL; ALTER TABLE ledger_tree DISABLE TRIGGER ALL;
                DELETE FROM ledger WHERE seq > \(keep);
                DELETE FROM ledger_tree WHERE id >= stepsign_tree_index(0, \(keep));
                ALTER TABLE ledger ENABLE TRIGGER ALL; ALTER TABLE ledger_tree ENABLE TRIGGER ALL;
                """)
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
