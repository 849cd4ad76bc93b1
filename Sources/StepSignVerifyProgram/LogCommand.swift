import ArgumentParser
import StepSignFormat
import StepSignLogClient
import StepSignProtocol

/// `stepsign-verify log DIR|URL --log-key VKEY [--jws FILE --index N] [--json]`: checks a log
/// published as C2SP tlog-tiles (SPEC §5.6) against its signed checkpoint: every entry bundle
/// hashes into the checkpoint's root and every hash tile holds that tree's hashes. With
/// `--jws` and `--index`, checks instead that the JWS is entry N of the published log, by an
/// inclusion proof built from the tiles.
struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Verify a log published as tiles (a directory or an http(s):// URL) against its signed checkpoint."
    )

    @Argument(help: "The published log: a directory (ledger.tiles_dir or a copy) or an http:// or https:// URL prefix.")
    var location: String

    @OptionGroup var logKeys: LogKeyOptions

    @Option(name: .customLong("jws"), help: ArgumentHelp("Check only that this JWS (a file, - for stdin) is in the log, at --index.", valueName: "file"))
    var jwsFile: String?

    @Option(help: ArgumentHelp("The JWS's log index (logIndex of the signing reply or of stepsign proof).", valueName: "n"))
    var index: Int64?

    @Flag(help: "Print one JSON object: ok, origin, treeSize, entries, tiles, problem (null where there is nothing to say).")
    var json = false

    func validate() throws {
        guard (jwsFile == nil) == (index == nil) else { throw ValidationError("--jws and --index go together") }
        if let index, index < 0 { throw ValidationError("--index must be 0 or more") }
    }

    func run() async throws {
        let keys: [NoteVerifierKey]
        var jws: String?
        do throws(InputFiles.Failure) {
            keys = try logKeys.load()
            guard !keys.isEmpty else { throw InputFiles.Failure(description: "log needs --log-key") }
            if let jwsFile { jws = try JWSInput(argument: jwsFile).read() }
        } catch {
            Console.error(error.description)
            throw ExitStatus.badInput.exitCode
        }
        let http = location.hasPrefix("http://") || location.hasPrefix("https://")
        let httpSource = http ? HTTPTileSource(prefix: location) : nil
        let log = PublishedLog(source: httpSource ?? DirectoryTileSource(path: location))
        var checkpoint: LogCheckpoint?
        var report = PublishedLogAudit.Report(entries: 0, tiles: 0)
        var problem: String?
        do {
            let signed = try await log.checkpoint(trusting: keys)
            checkpoint = signed.checkpoint
            if let jws, let index {
                try await Self.checkInclusion(Array(jws.utf8), index: index, log: log, checkpoint: signed.checkpoint)
            } else {
                report = try await PublishedLogAudit.check(log, checkpoint: signed.checkpoint).1
            }
        } catch {
            problem = "\(error)"
        }
        if let httpSource { try? await httpSource.shutdown() }
        if json {
            Console.json([
                "ok": .bool(problem == nil), "origin": (checkpoint?.origin).jsonValue,
                "treeSize": (checkpoint?.size).jsonValue, "entries": .int(report.entries), "tiles": .int(Int64(report.tiles)),
                "problem": problem.jsonValue,
            ])
        } else if let problem {
            Console.out("log not verified (\(log.source.location)): \(problem)")
        } else if let checkpoint {
            Console.out(index.map { "in the log: entry \($0) of \(checkpoint.size) (\(checkpoint.origin))" }
                ?? "log ok: \(checkpoint.origin), \(checkpoint.size) entries, \(report.tiles) tiles checked against its checkpoint")
        }
        if problem != nil { throw ExitStatus.invalid.exitCode }
    }

    /// The JWS is leaf `index` of the checkpoint's tree, by a proof of hashes read from tiles.
    static func checkInclusion(_ leaf: [UInt8], index: Int64, log: PublishedLog, checkpoint: LogCheckpoint) async throws {
        guard index < checkpoint.size else {
            throw TileError.missing("the checkpoint's tree has \(checkpoint.size) entries, none at index \(index)")
        }
        var tree = log.tree(size: checkpoint.size)
        let proof = try await tree.hashes(MerkleTree.inclusionPlan(index: index, size: checkpoint.size))
        guard MerkleProof.verifyInclusion(leafHash: MerkleHash.leaf(leaf), index: index, size: checkpoint.size,
                                          proof: proof, root: checkpoint.rootHash) else {
            throw TileError.mismatch("the JWS is not entry \(index) of the log the checkpoint signs")
        }
    }
}
