import Foundation
import Synchronization
import StepSignClient
import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import StepSignTestSupport
import Testing

/// Roots from entries on PostgreSQL (SPEC §5.5), two daemons on one database: entries swapped
/// and re-chained, or one stored tree node edited, behind their backs (running or stopped)
/// end with signing refused on both (15, `logProblem`), never a checkpoint whose root does not
/// match the entries.
@Suite("Roots from entries on PostgreSQL", .blocking, .enabled(if: PostgresServer.enabled))
struct PostgresRootsFromEntriesTests {
    /// Swaps entries `seq` and `seq + 1` and re-chains the whole ledger; the tree is left as it was.
    static func swapAndRechain(_ database: PostgresServer.Database, _ seq: Int64) throws {
        let columns = ["user_name", "iat", "kid", "jws", "peer_uid", "peer_pid", "peer_comm", "auth_level", "created_at"]
        try database.execute("""
            ALTER TABLE ledger DISABLE TRIGGER ALL;
            UPDATE ledger SET signature_id = signature_id || '-swap' WHERE seq IN (\(seq), \(seq + 1));
            UPDATE ledger l SET signature_id = replace(o.signature_id, '-swap', ''), \
            \(columns.map { "\($0) = o.\($0)" }.joined(separator: ", "))
              FROM ledger o WHERE l.seq IN (\(seq), \(seq + 1)) AND o.seq = \(2 * seq + 1) - l.seq;
            DO $$
            DECLARE
                prev bytea := decode(repeat('00', 32), 'hex');
                h bytea;
                r record;
            BEGIN
                FOR r IN SELECT seq, jws FROM ledger ORDER BY seq LOOP
                    h := sha256(prev || sha256(convert_to(r.jws, 'UTF8')));
                    UPDATE ledger SET prev_hash = prev, entry_hash = h WHERE seq = r.seq;
                    prev := h;
                END LOOP;
            END
            $$;
            ALTER TABLE ledger ENABLE TRIGGER ALL;
            """)
    }

    /// Gives the stored tree node `node` another hash.
    static func editNode(_ database: PostgresServer.Database, _ node: MerkleNode) throws {
        try database.execute("""
            ALTER TABLE ledger_tree DISABLE TRIGGER ALL;
            UPDATE ledger_tree SET hash = decode(repeat('00', 32), 'hex') WHERE id = \(node.storageIndex);
            ALTER TABLE ledger_tree ENABLE TRIGGER ALL;
            """)
    }

    static func count(_ database: PostgresServer.Database) throws -> Int64 {
        Int64(try database.query("SELECT coalesce(max(seq), 0) FROM ledger").first ?? "") ?? -1
    }

    /// Each stored note's size and whether its root is that of the ledger's first `size`
    /// entries as stored now.
    static func notes(_ database: PostgresServer.Database) throws -> [(size: Int64, matches: Bool)] {
        let leaves = try database.query("""
            SELECT encode(sha256('\\x00'::bytea || convert_to(jws, 'UTF8')), 'hex') FROM ledger ORDER BY seq
            """).map { try #require(Hex.decode($0)) }
        let rows = try database.query("SELECT size || ' ' || split_part(note, E'\\n', 3) FROM log_checkpoints ORDER BY size")
        return try rows.map { row in
            let parts = row.split(separator: " ")
            let size = try #require(Int64(parts[0]))
            var tree = MerkleFrontier()
            for leaf in leaves.prefix(Int(size)) { _ = tree.append(leafHash: leaf) }
            return (size, size <= leaves.count && Base64.decode(String(parts[1])) == tree.root)
        }
    }

    static func sign(_ daemon: DaemonHarness, _ payload: String) throws -> ClientReply {
        try daemon.connect().call("authenticateUserAndSignData", [
            "user": "alice", "payload": payload, "reason": "log", "authLevel": 0, "authenticatorType": 0,
        ])
    }

    static func expectRefused(_ daemons: [DaemonHarness], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for daemon in daemons {
            let connection = try daemon.connect()
            let checkpoint = try connection.call("getCheckpoint")
            #expect(checkpoint.code == 15, "\(checkpoint.code) \(checkpoint.message)", sourceLocation: sourceLocation)
            let refused = try sign(daemon, "after the attack")
            #expect(refused.code == 15, "\(refused.code) \(refused.message)", sourceLocation: sourceLocation)
            let problem = try connection.call("status").result?["logProblem"]?.stringValue
            #expect(problem?.isEmpty == false, "\(problem ?? "no logProblem")", sourceLocation: sourceLocation)
            #expect(daemon.log.components(separatedBy: "\n").contains { $0.contains("level=critical") && $0.contains("Merkle tree") },
                    sourceLocation: sourceLocation)
        }
    }

    static let config = "[ledger]\ncheckpoint_entries = 1000\ncheckpoint_seconds = 86400\n"

    /// Two daemons, both keeping a checkpoint of 8 entries, on a log of 12.
    static func withTwelveEntriesCheckpointedAtEight(_ body: (DaemonHarness, DaemonHarness, PostgresServer.Database) throws -> Void)
        throws {
        try PostgresTransparencyLogTests.withTwoDaemons(entries: 0, config: config) { a, b, database in
            var number = 0
            while try count(database) < 8 {
                number += 1
                try #require(try sign(number % 2 == 0 ? a : b, "entry \(number)").code == 0)
            }
            try #require(try count(database) == 8)
            for daemon in [a, b] { try #require(try PostgresTransparencyLogTests.checkpoint(daemon).body.size == 8) }
            for more in 1...4 { try #require(try sign(more % 2 == 0 ? a : b, "more \(more)").code == 0) }
            try #require(try count(database) == 12)
            try body(a, b, database)
        }
    }

    @Test("entries swapped and re-chained behind two running daemons: both refuse, no checkpoint over them")
    func swapWhileRunning() throws {
        try Self.withTwelveEntriesCheckpointedAtEight { a, b, database in
            let before = try Self.notes(database).count
            try Self.swapAndRechain(database, 4)
            try Self.expectRefused([a, b])
            #expect(try Self.notes(database).count == before)
        }
    }

    @Test("entries swapped and re-chained while both daemons were stopped: both refuse at start, no checkpoint over them")
    func swapWhileStopped() throws {
        try Self.withTwelveEntriesCheckpointedAtEight { a, b, database in
            for daemon in [a, b] { #expect(daemon.stop() == 0) }
            let before = try Self.notes(database).count
            try Self.swapAndRechain(database, 4)
            for daemon in [a, b] { try daemon.start() }
            try Self.expectRefused([a, b])
            #expect(try Self.notes(database).count == before)
        }
    }

    @Test("a stored tree node edited behind two running daemons: both refuse, every checkpoint's root matches the entries")
    func nodeEditedWhileRunning() throws {
        try Self.withTwelveEntriesCheckpointedAtEight { a, b, database in
            try Self.editNode(database, MerkleNode(level: 2, index: 2))
            try Self.expectRefused([a, b])
            let notes = try Self.notes(database)
            #expect(!notes.isEmpty && notes.allSatisfy(\.matches), "\(notes)")
        }
    }

    @Test("a stored tree node edited while both daemons were down (killed): both refuse at start, every checkpoint's root matches the entries")
    func nodeEditedWhileStopped() throws {
        try Self.withTwelveEntriesCheckpointedAtEight { a, b, database in
            for daemon in [a, b] { daemon.stop(signal: SIGKILL) }
            try Self.editNode(database, MerkleNode(level: 2, index: 2))
            for daemon in [a, b] { try daemon.start() }
            try Self.expectRefused([a, b])
            let notes = try Self.notes(database)
            #expect(!notes.isEmpty && notes.allSatisfy(\.matches), "\(notes)")
        }
    }

    @Test("two daemons signing at once with a checkpoint every 3 entries: each batch whose tail another daemon moved is prepared again; every signing answered, every note's root matches the entries")
    func checkpointsInBatchesWhileTheOtherDaemonAppends() throws {
        try PostgresTransparencyLogTests.withTwoDaemons(entries: 0, config: "[ledger]\ncheckpoint_entries = 3\n") { a, b, database in
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { worker in
                do {
                    let daemon = worker % 2 == 0 ? a : b
                    let connection = try daemon.connect()
                    for number in 0..<12 {
                        let reply = try connection.call("authenticateUserAndSignData", [
                            "user": "alice", "payload": "\(worker).\(number)", "reason": "log", "authLevel": 0, "authenticatorType": 0,
                        ])
                        if reply.code != 0 { failures.withLock { $0.append("\(reply.code) \(reply.message)") } }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
            for daemon in [a, b] {
                #expect(try daemon.connect().call("status").result?["logProblem"]?.stringValue == nil)
            }
            let notes = try Self.notes(database)
            #expect(notes.count >= 96 / 3 && notes.allSatisfy(\.matches), "\(notes.filter { !$0.matches })")
        }
    }
}
