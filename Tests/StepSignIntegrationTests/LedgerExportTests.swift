import Foundation
import StepSignProtocol
import StepSignClient
import StepSignTestSupport
import Testing

/// The ledger exported with `stepsign admin audit export` and checked offline by
/// `stepsign-verify ledger` (SPEC §5, §8): any changed, removed, inserted or reordered entry is found.
@Suite("Ledger export and offline check", .blocking)
struct LedgerExportTests {
    /// One exported ledger of 25 signatures over two keys, with the JWKS, in a temporary directory.
    struct Exported {
        /// Kept alive: its directory holds the files.
        let daemon: DaemonHarness
        let directory: URL
        /// The entry lines, in order.
        let lines: [String]
        /// The log's checkpoint lines (SPEC §5.5), which the export writes after their page.
        let notes: [String]
        let jwks: String

        /// Writes `lines` and the notes to a file and runs `stepsign-verify ledger FILE --keys JWKS`.
        func verify(_ lines: [String], name: String) throws -> Tools.Result {
            let path = directory.appendingPathComponent(name).path
            try ((lines + notes).joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            return try Tools.run([Binaries.path("stepsign-verify"), "ledger", path, "--keys", jwks])
        }
    }

    static let signatures = 25
    static let pageSize = 10

    /// Signs 25 at level 0 (rotating the key after 12), exports with the CLI in pages of 10.
    private func export() throws -> (Exported, Tools.Result) {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        for index in 1...Self.signatures {
            if index == 13 { #expect(try connection.call("admin.rotateKey").code == 0) }
            let reply = try connection.call("authenticateUserAndSignData", [
                "user": "alice", "payload": "entry \(index)", "reason": "export", "authLevel": 0, "authenticatorType": 0,
            ])
            try #require(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        }
        let (exported, jwks) = try daemon.exportLedgerAndKeys(["--page-size", String(Self.pageSize)])
        let lines = exported.stdout.split(separator: "\n").map(String.init)
        let isNote = { (line: String) in line.hasPrefix("{\"logCheckpoint\":") }
        return (Exported(daemon: daemon, directory: daemon.directory, lines: lines.filter { !isNote($0) },
                         notes: lines.filter(isNote), jwks: jwks), exported)
    }

    /// The JSON object of an export line, and back.
    private func object(_ line: String) throws -> JSONValue {
        try JSONParser.parse(Array(line.utf8))
    }

    private func line(_ object: JSONValue) throws -> String {
        object.sortingKeys.jsonText
    }

    @Test("25 signatures and the events around them, exported in pages of 10, are one line each in order; stepsign-verify ledger exits 0")
    func intactLedgerVerifies() throws {
        let (ledger, exported) = try export()
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(exported.stderr.isEmpty, "no progress on stderr when it is not a terminal: \(exported.stderr)")
        #expect(try ledger.lines.map { try object($0)["seq"]?.int } == (1...ledger.lines.count).map { Optional($0) })
        // The start's two events and the rotation's (SPEC §5.4) are entries too, told apart by kind.
        let kinds = try ledger.lines.map { try object($0)["kind"]?.stringValue ?? "" }
        #expect(kinds.filter { $0 == "signature" }.count == Self.signatures)
        #expect(kinds.filter { $0 == "event" }.count == DaemonHarness.startEvents + 1)
        let result = try ledger.verify(ledger.lines, name: "ledger.jsonl")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("ledger ok: \(ledger.lines.count) entries"), "\(result.stdout)")
    }

    @Test("a changed JWS: exit 1 naming its sequence number")
    func changedEntry() throws {
        let (ledger, _) = try export()
        var lines = ledger.lines
        var entry = try object(lines[6])
        let jws = try #require(entry["payloadSignature"]?.stringValue)
        let parts = jws.split(separator: ".").map(String.init)
        // Another payload under the same header and signature.
        let changed = parts[0] + "." + String(parts[1].dropLast()) + (parts[1].last == "A" ? "B" : "A") + "." + parts[2]
        entry["payloadSignature"] = .string(changed)
        lines[6] = try line(entry)
        let result = try ledger.verify(lines, name: "changed.jsonl")
        #expect(result.status == 1)
        #expect(result.stdout.contains("first bad seq 7:"), "\(result.stdout)")
    }

    @Test("a removed entry: exit 1 naming the first sequence number out of place")
    func removedEntry() throws {
        let (ledger, _) = try export()
        var lines = ledger.lines
        lines.remove(at: 9)
        let result = try ledger.verify(lines, name: "removed.jsonl")
        #expect(result.status == 1)
        #expect(result.stdout.contains("first bad seq 10:"), "\(result.stdout)")
    }

    @Test("an inserted entry: exit 1 naming the position it took")
    func insertedEntry() throws {
        let (ledger, _) = try export()
        var lines = ledger.lines
        lines.insert(lines[4], at: 5)
        let result = try ledger.verify(lines, name: "inserted.jsonl")
        #expect(result.status == 1)
        #expect(result.stdout.contains("first bad seq 6:"), "\(result.stdout)")
    }

    @Test("two entries swapped: exit 1 naming the first of them")
    func reorderedEntries() throws {
        let (ledger, _) = try export()
        var lines = ledger.lines
        lines.swapAt(14, 15)
        let result = try ledger.verify(lines, name: "reordered.jsonl")
        #expect(result.status == 1)
        #expect(result.stdout.contains("first bad seq 15:"), "\(result.stdout)")
    }
}
