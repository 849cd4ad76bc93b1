#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOConcurrencyHelpers
import StepSignFormat
import StepSignStorage
import StepSignSystem

/// Publishes the log as C2SP tlog-tiles in `ledger.tiles_dir` (SPEC §5.6) for a static web
/// server: after each checkpoint this daemon signs, the tiles and entry bundles the tree gained
/// since the last publication, then `checkpoint` (the note with its stored cosignatures that
/// verify against the `[[witness]]` keys, one per witness, as the daemon serves them).
///
/// Every file is replaced atomically (a temporary file, `fsync`, `rename`), and `checkpoint` is
/// written last, so a reader never sees a half-written tile nor a checkpoint whose tiles are not
/// there yet. The data comes from the store, never from the files already published: level-0
/// tiles are the leaf hashes of the entries read, higher levels the store's subtree hashes, so
/// a tile edited on disk is not carried on (and `stepsign-verify log` finds it). Publication
/// runs off the signing path, one at a time; checkpoints that arrive meanwhile are coalesced
/// into the newest. A failure is logged and retried with the next checkpoint; signing never
/// waits on it.
final class TilePublisher: Sendable {
    let directory: String
    private let store: any LedgerStore
    /// The configured `[[witness]]` keys, read at each publication (a reload may change them).
    private let witnesses: @Sendable () -> [NoteVerifierKey]
    private let logger: Logger
    private let state = NIOLockedValueBox(State())

    private struct State {
        /// The newest checkpoint not yet published.
        var pending: TransparencyLog.Signed?
        var running = false
        /// The origin and size published (nil: not read yet from `checkpoint`).
        var published: (origin: String, size: Int64)?
    }

    init(directory: String, store: any LedgerStore, witnesses: @escaping @Sendable () -> [NoteVerifierKey], logger: Logger) {
        self.directory = directory
        self.store = store
        self.witnesses = witnesses
        self.logger = logger
    }

    /// Schedules the publication of `signed` (and returns at once).
    func checkpointSigned(_ signed: TransparencyLog.Signed) {
        let start = state.withLockedValue { state -> Bool in
            if let pending = state.pending, pending.checkpoint.origin == signed.checkpoint.origin,
               pending.checkpoint.size > signed.checkpoint.size { return false }
            state.pending = signed
            guard !state.running else { return false }
            state.running = true
            return true
        }
        if start { Task { await drain() } }
    }

    /// Waits until nothing is pending or being published (for shutdown and tests).
    func idle() async {
        while state.withLockedValue({ $0.running }) { try? await Task.sleep(for: .milliseconds(5)) }
    }

    private func drain() async {
        while let next = state.withLockedValue({ state -> TransparencyLog.Signed? in
            let next = state.pending
            state.pending = nil
            if next == nil { state.running = false }
            return next
        }) {
            do {
                try await publish(next)
            } catch {
                logger.error("cannot publish the log's tiles", metadata: [
                    "dir": "\(directory)", "size": "\(next.checkpoint.size)", "error": "\(error)",
                ])
            }
        }
    }

    private func publish(_ signed: TransparencyLog.Signed) async throws {
        let size = signed.checkpoint.size
        let last = state.withLockedValue { $0.published } ?? publishedCheckpoint()
        // A published log larger than this checkpoint is not this log's past, nor is one of
        // another origin (a log epoch started since, SPEC §5.5): write it anew.
        let published = last.size > size || last.origin != signed.checkpoint.origin ? 0 : last.size
        for tile in Tile.tiles(size: size, publishedSize: published) where tile.isEntryBundle {
            let entries = try await store.ledgerEntries(afterSeq: tile.leaves.lowerBound, limit: tile.width)
            guard entries.count == tile.width, entries.first?.seq == tile.leaves.lowerBound + 1 else {
                throw TileError.missing("the store has not the entries of \(tile.path)")
            }
            let leaves = entries.map { Array($0.jws.utf8) }
            guard let bundle = EntryBundle.encode(leaves) else {
                throw TileError.malformed("an entry of \(tile.path) is longer than \(EntryBundle.maxEntrySize) bytes")
            }
            try write(bundle, to: tile.path)
            let level0 = Tile(level: 0, index: tile.index, width: tile.width)
            try write(leaves.flatMap { MerkleHash.leaf($0) }, to: level0.path)
        }
        for tile in Tile.tiles(size: size, publishedSize: published) where tile.level > 0 {
            let hashes = try await store.ledgerTreeHashes(tile.nodes)
            var bytes: [UInt8] = []
            for node in tile.nodes {
                guard let hash = hashes[node] else { throw TileError.missing("the store has not the subtree \(node)") }
                bytes += hash
            }
            try write(bytes, to: tile.path)
        }
        let cosignatures = CheckedCosignatures(text: signed.note.text, rows: try await store.logCosignatures(size: size),
                                               witnesses: witnesses())
        try write(Array((signed.note.serialized + cosignatures.lines).utf8), to: "checkpoint")
        state.withLockedValue { $0.published = (signed.checkpoint.origin, size) }
        logger.debug("log tiles published", metadata: ["size": "\(size)", "dir": "\(directory)"])
    }

    /// The origin and size of the published `checkpoint`, or ("", 0) if there is none that
    /// reads (then every tile is written anew).
    private func publishedCheckpoint() -> (origin: String, size: Int64) {
        guard let bytes = try? SecureFile.read(directory + "/checkpoint"),
              let note = try? SignedNote(parsing: String(decoding: bytes, as: UTF8.self)),
              let checkpoint = try? LogCheckpoint(text: note.text)
        else { return ("", 0) }
        return (checkpoint.origin, checkpoint.size)
    }

    /// Writes `bytes` at `path` under the directory, atomically, world-readable (a web server
    /// publishes them), making the directories on the way.
    private func write(_ bytes: [UInt8], to path: String) throws {
        let full = directory + "/" + path
        var parent = ""
        for part in (directory + "/" + path).split(separator: "/").dropLast() {
            parent += "/" + part
            // Made with 0755 whatever the daemon's umask (0077 under its unit): the web server
            // must be able to traverse them.
            if mkdir(parent, 0o755) == 0 {
                guard chmod(parent, 0o755) == 0 else { throw SystemError("chmod", path: parent) }
            } else if errno != EEXIST {
                throw SystemError("mkdir", path: parent)
            }
        }
        try SecureFile.writeAtomically(bytes, to: full, mode: 0o644)
    }
}
