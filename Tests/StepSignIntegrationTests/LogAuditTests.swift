import Foundation
import StepSignClient
import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import StepSignTestSupport
import Testing

/// `admin.auditVerify` covers the whole log (SPEC §5.5 "the audit covers all of it"), on the
/// real daemon and both stores: every stored tree node against the hashes the entries make,
/// every epoch row against the signed event that started it, and every stored cosignature
/// against its witness's key and its checkpoint. A clean log with a genuine cosignature is ok;
/// a node edited, an epoch forged or a cosignature row injected behind the daemon's back is
/// reported with what is wrong.
@Suite("Log audit", .blocking)
struct LogAuditTests {
    enum Attack: String, CaseIterable, CustomTestStringConvertible {
        case editedNode = "an edited tree node"
        case forgedEpoch = "a forged epoch"
        case injectedCosignature = "an injected cosignature"

        var testDescription: String { rawValue }

        /// What the audit's `problem` says.
        var reported: String {
            switch self {
            case .editedNode: "the stored hash of the subtree (1, 0)"
            case .forgedEpoch: "the log epoch 2"
            case .injectedCosignature: "the stored cosignature of witness w1.example"
            }
        }
    }

    /// A line of `witness`'s name and key ID whose signature is not its own: what someone with
    /// the database can write.
    static func forgedLine(_ witness: WitnessCosignatureTests.Witness) -> String {
        let id = witness.vkey.keyID
        let keyID: [UInt8] = [UInt8(id >> 24), UInt8(id >> 16 & 0xff), UInt8(id >> 8 & 0xff), UInt8(id & 0xff)]
        return "\u{2014} \(witness.name) " + Base64.encode(keyID + [UInt8](repeating: 0, count: 72))
    }

    static func audit(_ connection: StepSignConnection) throws -> JSONValue {
        try #require(try connection.call("admin.auditVerify").result)
    }

    /// Signs 8 entries, stores `witness`'s genuine cosignature of the checkpoint then, signs 3
    /// more and checkpoints again (a size with no cosignature); the audit is ok. Returns the
    /// sizes of the two checkpoints.
    static func cleanLog(_ connection: StepSignConnection, witness: WitnessCosignatureTests.Witness) throws -> (Int64, Int64) {
        for n in 1...8 { _ = try TransparencyLogTests.signLevel0(connection, "entry \(n)") }
        let first = try #require(try connection.call("getCheckpoint").result?["checkpoint"]?.stringValue)
        let firstSize = try LogCheckpoint(text: try SignedNote(parsing: first).text).size
        let stored = try connection.call("admin.addCosignatures", ["treeSize": firstSize, "cosignatures": [try witness.line(first)]])
        #expect(stored.code == 0, "\(stored.message)")
        for n in 9...11 { _ = try TransparencyLogTests.signLevel0(connection, "entry \(n)") }
        let second = try #require(try connection.call("getCheckpoint").result?["checkpoint"]?.stringValue)
        let secondSize = try LogCheckpoint(text: try SignedNote(parsing: second).text).size
        let audit = try audit(connection)
        #expect(audit["ok"]?.boolValue == true && audit["problem"] == .null, "a clean log: \(audit)")
        return (firstSize, secondSize)
    }

    @Test("SQLite: a clean log is ok; each attack is reported", arguments: Attack.allCases)
    func sqlite(_ attack: Attack) throws {
        let witness = try WitnessCosignatureTests.Witness("w1.example")
        let daemon = try WitnessCosignatureTests.daemon(witnesses: witness.config)
        let connection = try daemon.connect()
        let (_, uncosigned) = try Self.cleanLog(connection, witness: witness)
        let sql = switch attack {
        case .editedNode:
            """
            DROP TRIGGER ledger_tree_no_update;
            UPDATE ledger_tree SET hash = zeroblob(32) WHERE id = \(MerkleNode(level: 1, index: 0).storageIndex);
            """
        case .forgedEpoch:
            "INSERT INTO log_epochs (epoch, origin, first_index, created_at) SELECT 2, origin || '/epoch2', 3, 0 FROM log_origin;"
        case .injectedCosignature:
            "INSERT INTO log_cosignatures (size, witness, line, created_at) VALUES (\(uncosigned), 'w1.example', '\(Self.forgedLine(witness))', 0);"
        }
        let written = try Tools.python("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.executescript(sys.argv[2])
            db.commit()
            """, daemon.stateDirectory + "/stepsign.sqlite", sql)
        #expect(written.status == 0, "\(written.stderr)")
        let audit = try Self.audit(connection)
        #expect(audit["ok"]?.boolValue == false, "\(audit)")
        #expect(audit["problem"]?.stringValue?.contains(attack.reported) == true, "\(audit)")
    }

    @Test("PostgreSQL: a clean log is ok; each attack is reported", .enabled(if: PostgresServer.enabled), arguments: Attack.allCases)
    func postgres(_ attack: Attack) throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let witness = try WitnessCosignatureTests.Witness("w1.example")
        let daemon = try DaemonHarness(config: "instance = \"host-a\"\n" + database.config + "\n" + witness.config)
        defer { _ = daemon.stop() }
        let connection = try daemon.connect()
        let (_, uncosigned) = try Self.cleanLog(connection, witness: witness)
        switch attack {
        case .editedNode:
            try database.execute("""
                ALTER TABLE ledger_tree DISABLE TRIGGER ALL;
                UPDATE ledger_tree SET hash = decode(repeat('00', 32), 'hex') WHERE id = \(MerkleNode(level: 1, index: 0).storageIndex);
                ALTER TABLE ledger_tree ENABLE TRIGGER ALL;
                """)
        case .forgedEpoch:
            try database.execute("""
                INSERT INTO log_epochs (epoch, origin, first_index, created_at) SELECT 2, origin || '/epoch2', 3, now() FROM log_origin;
                """)
        case .injectedCosignature:
            try database.execute("""
                INSERT INTO log_cosignatures (size, witness, line, created_at) VALUES (\(uncosigned), 'w1.example', '\(Self.forgedLine(witness))', now());
                """)
        }
        let audit = try Self.audit(connection)
        #expect(audit["ok"]?.boolValue == false, "\(audit)")
        #expect(audit["problem"]?.stringValue?.contains(attack.reported) == true, "\(audit)")
    }
}
