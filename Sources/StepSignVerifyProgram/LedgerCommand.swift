import ArgumentParser
import Foundation
import StepSignCrypto
import StepSignFormat
import StepSignProtocol

/// `stepsign-verify ledger FILE --keys FILE [--checkpoint FILE]`: the checks of SPEC §5.3 over
/// an exported ledger (JSON lines: `admin.exportLedger` entries, and `{"checkpoint": JWS}`
/// lines), with ``LedgerVerifier``, the code `admin.auditVerify` runs.
///
/// The file is read twice, line by line (checkpoints first, then entries), so a ledger of
/// millions of entries is never held in memory; stdin is read once into memory. Each line is
/// bounded (``LineReader``): a longer one is refused with exit 2, naming its number.
struct LedgerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger",
        abstract: "Verify an exported ledger: the chain, every signature, the columns, the checkpoints."
    )

    @Argument(help: "The exported ledger (JSON lines); - reads stdin.")
    var file: String

    @OptionGroup var keyOptions: KeysOptions

    @Option(name: .customLong("checkpoint"), help: ArgumentHelp(
        "A checkpoint kept elsewhere (the daemon's journal, an earlier getCheckpoint, a proof's): a C2SP note, whose tree size the log must reach with its root, or a JWS, whose entry hash the ledger must hold at its seq.",
        valueName: "file"))
    var checkpointFile: String?

    @OptionGroup var logKeys: LogKeyOptions

    @Option(name: .customLong("checkpoint-entries"), help: ArgumentHelp(
        "The daemon's ledger.checkpoint_entries: the longest run of entries accepted without a checkpoint (0: not checked).",
        valueName: "n"))
    var checkpointEntries = 1000

    @Flag(help: "Print one JSON object: ok, entries, firstBadSeq, checkpoints, problem (null where there is nothing to say).")
    var json = false

    /// The `--json` report carries the fields of `admin.auditVerify` (and `stepsign admin
    /// audit verify --json`), every one present, null when there is nothing to say.

    func validate() throws {
        guard checkpointEntries >= 0 else { throw ValidationError("--checkpoint-entries must be 0 or more") }
    }

    func run() throws {
        var verifier: LedgerVerifier
        let source: LineSource
        do throws(InputFiles.Failure) {
            let trusted = try keyOptions.load()
            verifier = LedgerVerifier(options: .init(trustedKeys: trusted, checkpointEntries: checkpointEntries > 0 ? checkpointEntries : nil,
                                                     logKeys: try logKeys.load()))
            if let checkpointFile {
                let raw = try InputFiles.text(checkpointFile)
                do {
                    if raw.contains("\n\n") {
                        // A C2SP note (or a proof file, whose checkpoint follows its path).
                        let note = raw.hasPrefix(TlogProof.header) ? try TlogProof(parsing: raw).checkpoint.serialized : raw
                        try verifier.requireLogCheckpoint(note)
                    } else {
                        try verifier.requireCheckpoint(raw.trimmingCharacters(in: .whitespacesAndNewlines))
                    }
                } catch {
                    throw InputFiles.Failure(description: "\(checkpointFile): not a checkpoint of these keys: \(error)")
                }
            }
            source = try LineSource(path: file)
        } catch {
            Console.error(error.description)
            throw ExitStatus.badInput.exitCode
        }

        let progress = Progress()
        do throws(InputFiles.Failure) {
            // Pass 1: the checkpoint lines (JWS ones, and the log's C2SP notes).
            try source.forEachLine { (number: Int, line: String) throws(InputFiles.Failure) -> Bool in
                if line.contains(#""logCheckpoint""#) {
                    guard let note = Self.member("logCheckpoint", in: line) else {
                        throw InputFiles.Failure(description: "\(file) line \(number): not a ledger entry or checkpoint")
                    }
                    verifier.addLogCheckpoint(note)
                    return true
                }
                guard line.contains(#""checkpoint""#) else { return true }
                guard let checkpoint = Self.checkpoint(in: line) else {
                    throw InputFiles.Failure(description: "\(file) line \(number): not a ledger entry or checkpoint")
                }
                verifier.addCheckpoint(checkpoint)
                return true
            }
            // Pass 2: the entries, in order, 1024 at a time (their signatures are checked on every core).
            var batch: [LedgerLink] = []
            batch.reserveCapacity(1024)
            try source.forEachLine { (number: Int, line: String) throws(InputFiles.Failure) -> Bool in
                if line.contains(#""checkpoint""#), Self.checkpoint(in: line) != nil {
                    return true
                }
                if line.contains(#""logCheckpoint""#), Self.member("logCheckpoint", in: line) != nil {
                    return true
                }
                guard let entry = LedgerExportEntry(jsonLine: line.utf8) else {
                    throw InputFiles.Failure(description: "\(file) line \(number): not a ledger entry")
                }
                progress.tick()
                // A hash that is not hex cannot chain: the verifier gets a link that breaks.
                batch.append((try? entry.ledgerLink()) ?? LedgerLink(
                    seq: entry.seq, signatureID: entry.signatureID, payloadSignature: entry.payloadSignature, prevHash: [], entryHash: []))
                guard batch.count == 1024 else { return true }
                defer { batch.removeAll(keepingCapacity: true) }
                return verifier.add(contentsOf: batch)
            }
            verifier.add(contentsOf: batch)
        } catch {
            progress.end()
            Console.error(error.description)
            throw ExitStatus.badInput.exitCode
        }
        progress.end()

        let audit = verifier.finish()
        if json {
            Console.json([
                "ok": .bool(audit.ok), "entries": .int(Int64(audit.entries)), "firstBadSeq": audit.firstBadSeq.jsonValue,
                "checkpoints": .int(Int64(audit.checkpoints)), "problem": audit.problem.jsonValue,
                "events": .int(Int64(audit.events)),
            ])
        }
        guard audit.ok else {
            if !json {
                let seq = audit.firstBadSeq.map { "first bad seq \($0): " } ?? ""
                Console.out("ledger broken: \(seq)\(audit.problem ?? "") (\(audit.entries) \(audit.entries == 1 ? "entry" : "entries") checked)")
            }
            throw ExitStatus.invalid.exitCode
        }
        if !json {
            var line = "ledger ok: \(audit.entries) \(audit.entries == 1 ? "entry" : "entries") checked "
                + "(\(audit.entries - audit.events) \(audit.entries - audit.events == 1 ? "signature" : "signatures"), "
                + "\(audit.events) \(audit.events == 1 ? "event" : "events")), "
                + "\(audit.checkpoints) \(audit.checkpoints == 1 ? "checkpoint" : "checkpoints")"
            if verifier.unsignedPeerEntries > 0 {
                line += "; \(verifier.unsignedPeerEntries) entries from before peer claims (their peer columns are not signed)"
            }
            if checkpointFile != nil { line += "; reaches the checkpoint given" }
            Console.out(line)
        }
    }

    /// The JWS of a checkpoint line, `{"checkpoint": JWS}`, or nil.
    private static func checkpoint(in line: String) -> String? {
        member("checkpoint", in: line)
    }

    /// The string member `name` of a one-member line such as `{"logCheckpoint": NOTE}`, or nil.
    private static func member(_ name: String, in line: String) -> String? {
        guard let value = try? JSONParser.parse(line.utf8), value.members?.count == 1 else { return nil }
        return value[name]?.stringValue
    }
}

/// The non-empty lines of a file (read again on each pass) or of stdin (kept in memory), each
/// at most ``LineReader/maximumLineLength`` bytes: a longer line is refused unread (exit 2).
private struct LineSource {
    let path: String
    /// Stdin's non-blank lines with their numbers.
    let stdinLines: [(number: Int, line: String)]?

    init(path: String) throws(InputFiles.Failure) {
        self.path = path
        if path == "-" {
            var lines: [(number: Int, line: String)] = []
            try Self.readLines(descriptor: STDIN_FILENO, name: "stdin") { (number: Int, line: String) throws(InputFiles.Failure) -> Bool in
                lines.append((number, line))
                return true
            }
            stdinLines = lines
        } else {
            guard FileManager.default.isReadableFile(atPath: path) else { throw InputFiles.Failure(description: "cannot read \(path)") }
            stdinLines = nil
        }
    }

    /// Calls `body(lineNumber, line)` for each line that is not blank until it returns false.
    func forEachLine(_ body: (Int, String) throws(InputFiles.Failure) -> Bool) throws(InputFiles.Failure) {
        if let stdinLines {
            for (number, line) in stdinLines {
                guard try body(number, line) else { return }
            }
            return
        }
        try InputFiles.withDescriptor(path) { (descriptor: Int32) throws(InputFiles.Failure) in
            try Self.readLines(descriptor: descriptor, name: path, body)
        }
    }

    /// Reads `descriptor`'s lines with a ``LineReader`` and calls `body` for each that is not
    /// blank until it returns false.
    private static func readLines(descriptor: Int32, name: String,
                                  _ body: (Int, String) throws(InputFiles.Failure) -> Bool) throws(InputFiles.Failure) {
        var reader = LineReader(descriptor: descriptor, name: name)
        while let bytes = try reader.next() {
            guard let line = String(validating: bytes, as: UTF8.self) else {
                throw InputFiles.Failure(description: "\(name) line \(reader.lineNumber) is not UTF-8 text")
            }
            if line.allSatisfy(\.isWhitespace) { continue }
            guard try body(reader.lineNumber, line) else { return }
        }
    }
}

/// "checked N entries" on stderr about once a second, only when stderr is a terminal.
private final class Progress {
    private let enabled = isatty(STDERR_FILENO) == 1
    private var count = 0
    private var last = Date()
    private var shown = false

    func tick() {
        count += 1
        guard enabled, count % 1000 == 0, Date().timeIntervalSince(last) >= 1 else { return }
        last = Date()
        shown = true
        FileHandle.standardError.write(Data("\rstepsign-verify: checked \(count) entries".utf8))
    }

    func end() {
        if shown { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
