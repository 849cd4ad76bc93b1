import Foundation
import StepSignClient
import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import StepSignTestSupport
import Testing

/// Witnesses' cosignatures on the real daemon (SPEC §5.6): `admin.addCosignatures` stores only
/// lines that verify under a configured `[[witness]]` key over the stored checkpoint, they are
/// carried in `getCheckpoint`, proofs and exports, `status.witnessed` follows
/// `ledger.witness_quorum`, and `stepsign-verify --witness … --quorum` accepts a proof file from
/// `stepsign proof` with them. A row forged for a size before the witness answers neither is
/// served nor keeps the witness's genuine cosignature of that size out.
@Suite(.blocking) struct WitnessCosignatureTests {
    struct Witness {
        var name: String
        var key: Ed25519PrivateKey
        var vkey: NoteVerifierKey

        init(_ name: String) throws {
            self.name = name
            key = try Ed25519PrivateKey.generate()
            vkey = try NoteVerifierKey(name: name, ed25519: key.publicKey, type: .cosignatureV1)
        }

        /// This witness's cosignature line of `note`'s text.
        func line(_ note: String, at timestamp: UInt64 = 1_790_000_000) throws -> String {
            var cosigned = try SignedNote(text: try SignedNote(parsing: note).text)
            try cosigned.cosign(name: name, key: key, timestamp: timestamp)
            return try #require(cosigned.signatures.first).line
        }

        var config: String { "[[witness]]\nname = \"\(name)\"\nurl = \"https://\(name)\"\nkey = \"\(vkey.description)\"\n" }
    }

    /// A daemon whose config ends with `witnesses` as written: the harness merges tables by
    /// name, which arrays of tables are not.
    static func daemon(config: String = "", witnesses: String, start: Bool = true) throws -> DaemonHarness {
        let daemon = try DaemonHarness(config: config, start: false)
        try DaemonHarness.writeConfig(DaemonHarness.config(config) + "\n" + witnesses, to: daemon.configPath)
        if start { try daemon.start() }
        return daemon
    }

    /// Writes the proof file of `signed` (`stepsign proof`) and the JWS, and returns a run of
    /// `stepsign-verify` on them with the published keys and log keys and `extra` arguments.
    static func proofVerifier(_ daemon: DaemonHarness, _ connection: StepSignConnection, _ signed: JSONValue) throws
        -> ([String]) throws -> Tools.Result {
        let signatureID = try #require(signed["dataSignatureID"]?.stringValue)
        let proofPath = daemon.directory.appendingPathComponent("\(signatureID).tlog-proof").path
        let proof = try Tools.run([Binaries.path("stepsign"), "--socket", daemon.socketPath, "proof", signatureID, "-o", proofPath])
        #expect(proof.status == 0, "\(proof.stderr)")
        let (_, jwks) = try daemon.exportLedgerAndKeys()
        let jwsPath = daemon.directory.appendingPathComponent("\(signatureID).jws").path
        try #require(signed["payloadSignature"]?.stringValue).write(toFile: jwsPath, atomically: true, encoding: .utf8)
        let logKeys = try TransparencyLogTests.logKeys(connection).flatMap { ["--log-key", $0.description] }
        return { extra in
            try Tools.run([Binaries.path("stepsign-verify"), "--keys", jwks, "--min-level", "0", "--proof", proofPath]
                          + logKeys + extra + [jwsPath])
        }
    }

    @Test("cosignatures of configured witnesses are checked, stored, carried in proofs and exports, and count for status and the verifier")
    func cosignaturesEndToEnd() throws {
        let w1 = try Witness("w1.example"), w2 = try Witness("w2.example"), stranger = try Witness("w3.example")
        let daemon = try Self.daemon(config: "[ledger]\nwitness_quorum = 2\n", witnesses: w1.config + w2.config)
        let connection = try daemon.connect()
        let signed = try TransparencyLogTests.signLevel0(connection, "witnessed")
        let checkpoint = try #require(try connection.call("getCheckpoint").result?["checkpoint"]?.stringValue)
        let size = try LogCheckpoint(text: try SignedNote(parsing: checkpoint).text).size
        #expect(try connection.call("status").result?["witnessed"]?.boolValue == false)

        // Refused, and nothing stored: a line of an unconfigured witness, a forged line of a
        // configured one, a size with no stored checkpoint.
        func add(_ lines: [String], size: Int64) throws -> ClientReply {
            try connection.call("admin.addCosignatures", ["treeSize": size, "cosignatures": lines])
        }
        #expect(try add([try w1.line(checkpoint), try stranger.line(checkpoint)], size: size).code == 4)
        var forged = try SignedNote(text: try SignedNote(parsing: checkpoint).text)
        try forged.cosign(name: w2.name, key: stranger.key, timestamp: 1)
        #expect(try add([try #require(forged.signatures.first).line], size: size).code == 4)
        #expect(try add([try w1.line(checkpoint)], size: size + 100).code == 4)
        #expect(try connection.call("getCheckpoint").result?["checkpoint"]?.stringValue == checkpoint)

        // Both witnesses' lines: stored, carried, counted.
        let stored = try add([try w1.line(checkpoint), try w2.line(checkpoint)], size: size)
        #expect(stored.code == 0 && stored.result?["stored"]?.int == 2, "\(stored.code) \(stored.message)")
        #expect(try connection.call("status").result?["witnessed"]?.boolValue == true)
        let carried = try SignedNote(parsing: try #require(try connection.call("getCheckpoint").result?["checkpoint"]?.stringValue))
        #expect(carried.cosigners([w1.vkey, w2.vkey]).count == 2)
        let exported = try #require(try connection.call("admin.exportLedger").result?["logCheckpoints"]?.arrayValue)
        #expect(exported.contains { ($0.stringValue.flatMap { try? SignedNote(parsing: $0) })?.cosigners([w1.vkey, w2.vkey]).count == 2 })

        // The proof file of `stepsign proof` carries them; stepsign-verify counts them.
        let verify = try Self.proofVerifier(daemon, connection, signed)
        let both = try verify(["--witness", w1.vkey.description, "--witness", w2.vkey.description])
        #expect(both.status == 0, "\(both.stdout)\(both.stderr)")
        #expect(both.stdout.contains("cosigned by w1.example, w2.example"), "\(both.stdout)")
        let three = try verify(["--witness", w1.vkey.description, "--witness", w2.vkey.description,
                                "--witness", stranger.vkey.description])
        #expect(three.status == 1, "\(three.stdout)")
        #expect(three.stdout.contains("the quorum is 3"), "\(three.stdout)")
    }

    @Test("cosignature rows written into the database are not served: the daemon's genuine proofs still verify")
    func injectedCosignaturesAreNotServed() throws {
        let w1 = try Witness("w1.example"), w2 = try Witness("w2.example"), stranger = try Witness("w3.example")
        let daemon = try Self.daemon(witnesses: w1.config + w2.config)
        let connection = try daemon.connect()
        let signed = try TransparencyLogTests.signLevel0(connection, "witnessed")
        let checkpoint = try #require(try connection.call("getCheckpoint").result?["checkpoint"]?.stringValue)
        let size = try LogCheckpoint(text: try SignedNote(parsing: checkpoint).text).size
        #expect(try connection.call("admin.addCosignatures", ["treeSize": size, "cosignatures": [try w1.line(checkpoint)]]).code == 0)
        // Behind the daemon's back: w2's row forged by another key, a stranger's row, and garbage.
        var forged = try SignedNote(text: try SignedNote(parsing: checkpoint).text)
        try forged.cosign(name: w2.name, key: stranger.key, timestamp: 1)
        let rows: [(String, String)] = [(w2.name, try #require(forged.signatures.first).line),
                                        (stranger.name, try stranger.line(checkpoint)), ("w4.example", "\u{2014} w4.example AAAA")]
        for (witness, line) in rows {
            let written = try Tools.python("""
                import sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                db.execute("INSERT INTO log_cosignatures (size, witness, line, created_at) VALUES (?, ?, ?, 1)", (int(sys.argv[2]), sys.argv[3], sys.argv[4]))
                db.commit()
                """, daemon.stateDirectory + "/stepsign.sqlite", "\(size)", witness, line)
            #expect(written.status == 0, "\(written.stderr)")
        }
        let served = try SignedNote(parsing: try #require(try connection.call("getCheckpoint").result?["checkpoint"]?.stringValue))
        #expect(served.signatures.filter { [w2.name, stranger.name, "w4.example"].contains($0.name) }.isEmpty, "\(served.serialized)")
        #expect(served.cosigners([w1.vkey]).count == 1)

        let verified = try Self.proofVerifier(daemon, connection, signed)(["--witness", w1.vkey.description, "--quorum", "1"])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
    }

    /// Signs an entry, writes a forged row of `witness` for the checkpoint's size behind the
    /// daemon's back (`inject` writes it, given the time's SQL) before the witness answers, then stores the
    /// witness's genuine line: it is stored and served, `waitForProof` and `stepsign-verify
    /// --witness` accept the proof, and the audit still reports the forged row. A second
    /// cosignature of the size by the witness is taken but not stored (`count` runs an SQL
    /// count), and one line of the witness is still served.
    static func forgedRowBeforeTheWitness(_ daemon: DaemonHarness, witness w1: Witness,
                                          inject: ((String) -> String) throws -> Void,
                                          count: (String) throws -> Int) throws {
        let connection = try daemon.connect()
        let signed = try TransparencyLogTests.signLevel0(connection, "witnessed")
        let signatureID = try #require(signed["dataSignatureID"]?.stringValue)
        let checkpoint = try #require(try connection.call("getCheckpoint").result?["checkpoint"]?.stringValue)
        let size = try LogCheckpoint(text: try SignedNote(parsing: checkpoint).text).size
        let forged = LogAuditTests.forgedLine(w1)
        try inject { now in "INSERT INTO log_cosignatures (size, witness, line, created_at) VALUES (\(size), '\(w1.name)', '\(forged)', \(now))" }

        let genuine = try w1.line(checkpoint)
        let stored = try connection.call("admin.addCosignatures", ["treeSize": size, "cosignatures": [genuine]])
        #expect(stored.code == 0, "\(stored.message)")
        // Served: the genuine line, once; never the forged one.
        let served = try SignedNote(parsing: try #require(try connection.call("getCheckpoint").result?["checkpoint"]?.stringValue))
        #expect(served.cosigners([w1.vkey]).count == 1, "\(served.serialized)")
        #expect(served.signatures.filter { $0.name == w1.name }.map(\.line) == [genuine], "\(served.serialized)")
        let waited = try connection.call("waitForProof", ["signatureID": signatureID, "timeoutSeconds": 5], timeout: 60)
        #expect(waited.code == 0, "\(waited.message)")
        let proof = waited.result?["proof"]?.stringValue ?? ""
        #expect(proof.contains(genuine) && !proof.contains(forged), "\(proof)")
        let verified = try Self.proofVerifier(daemon, connection, signed)(["--witness", w1.vkey.description, "--quorum", "1"])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        #expect(verified.stdout.contains("cosigned by w1.example"), "\(verified.stdout)")
        // The audit still reports the forged row.
        let audit = try LogAuditTests.audit(connection)
        #expect(audit["ok"]?.boolValue == false, "\(audit)")
        #expect(audit["problem"]?.stringValue?.contains("the stored cosignature of witness w1.example of the checkpoint of size \(size)") == true,
                "\(audit)")

        // The witness cosigns the size again (a new time, so a new line): taken, not stored
        // (its stored line verifies), and the note still carries one line of it.
        let again = try w1.line(checkpoint, at: 1_790_000_100)
        let retaken = try connection.call("admin.addCosignatures", ["treeSize": size, "cosignatures": [again]])
        #expect(retaken.code == 0, "\(retaken.message)")
        #expect(try count("SELECT count(*) FROM log_cosignatures WHERE size = \(size)") == 2)
        let servedAgain = try SignedNote(parsing: try #require(try connection.call("getCheckpoint").result?["checkpoint"]?.stringValue))
        #expect(servedAgain.signatures.filter { $0.name == w1.name }.map(\.line) == [genuine], "\(servedAgain.serialized)")
    }

    @Test("SQLite: a row forged before the witness answers does not keep its genuine cosignature out")
    func forgedRowBeforeTheWitnessOnSQLite() throws {
        let w1 = try Witness("w1.example")
        let daemon = try Self.daemon(witnesses: w1.config)
        let database = daemon.stateDirectory + "/stepsign.sqlite"
        try Self.forgedRowBeforeTheWitness(daemon, witness: w1, inject: { sql in
            let written = try Tools.python("""
                import sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                db.execute(sys.argv[2])
                db.commit()
                """, database, sql("0"))
            #expect(written.status == 0, "\(written.stderr)")
        }, count: { sql in
            let counted = try Tools.python("""
                import sqlite3, sys
                print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])
                """, database, sql)
            return try #require(Int(counted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(counted.stderr)")
        })
    }

    @Test("PostgreSQL: a row forged before the witness answers does not keep its genuine cosignature out",
          .enabled(if: PostgresServer.enabled))
    func forgedRowBeforeTheWitnessOnPostgreSQL() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let w1 = try Witness("w1.example")
        let daemon = try DaemonHarness(config: "instance = \"host-a\"\n" + database.config + "\n" + w1.config)
        defer { _ = daemon.stop() }
        try Self.forgedRowBeforeTheWitness(daemon, witness: w1, inject: { sql in try database.execute(sql("now()")) },
                                           count: { sql in try #require(Int(try database.query(sql).first ?? "")) })
    }

    @Test("a witness key that is not a cosignature key, or whose key ID is not its key's, is exit 78")
    func badWitnessKeyIsExit78() throws {
        let w1 = try Witness("w1.example")
        let text = w1.vkey.description
        // The right shape with another key ID.
        let wrongID = text.replacingOccurrences(of: "+" + String(text.split(separator: "+")[1]) + "+", with: "+00000000+")
        let daemon = try Self.daemon(witnesses: "[[witness]]\nname = \"w1.example\"\nurl = \"https://w1\"\nkey = \"\(wrongID)\"\n",
                                     start: false)
        let result = try Tools.run([Binaries.path("stepsignd"), "--config", daemon.configPath, "--socket", daemon.socketPath,
                                    "--state-dir", daemon.stateDirectory])
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("witness w1.example"), "\(result.stderr)")
    }
}
