import StepSignClient
import StepSignCrypto
import StepSignFormat
import StepSignLogClient
import StepSignProtocol

/// Where `stepsign monitor` reads the log: the daemon's socket, or a published log (tiles).
final class MonitorFeed {
    private enum Source {
        case socket(GlobalOptions)
        case published(PublishedLog, HTTPTileSource?)
    }

    private let source: Source

    init(global: GlobalOptions, tiles: String?, url: String?) throws {
        if let url {
            let http = HTTPTileSource(prefix: url)
            source = .published(PublishedLog(source: http), http)
        } else if let tiles {
            source = .published(PublishedLog(source: DirectoryTileSource(path: tiles)), nil)
        } else {
            source = .socket(global)
        }
    }

    /// Closes the HTTP client's connections (AsyncHTTPClient requires it before the client goes).
    func close() async {
        if case let .published(_, http?) = source { try? await http.shutdown() }
    }

    /// The daemon's published keys (the socket only).
    func publicKeys() throws -> (keys: TrustedKeys, logKeys: [NoteVerifierKey]) {
        guard case let .socket(global) = source else { throw CLIError("tiles give no keys: pass --keys and --log-key", exitCode: CLIError.usage) }
        let reply = try global.connect().call("getPublicKeys", ["format": "jwks"]).requireAccepted("getPublicKeys")
        guard let jwks = reply.result?["jwks"], let logKeys = reply.result?["logKeys"]?.arrayValue else {
            throw CLIError("getPublicKeys gave no jwks and logKeys")
        }
        let keys = try TrustedKeys(parsing: String(decoding: jwks.jsonBytes, as: UTF8.self))
        return (keys, try logKeys.compactMap(\.stringValue).map { try NoteVerifierKey($0) })
    }

    /// The log's latest checkpoint, as a signed note (not yet verified).
    func checkpoint() async throws -> String {
        switch source {
        case let .socket(global):
            let reply = try global.connect().call("getCheckpoint").requireAccepted("getCheckpoint")
            guard let note = reply.result?["checkpoint"]?.stringValue else { throw CLIError("getCheckpoint gave no checkpoint") }
            return note
        case let .published(log, _):
            guard let bytes = try await log.source.read("checkpoint", limit: PublishedLog.maxCheckpointSize) else {
                throw TileError.missing("\(log.source.location) has no checkpoint")
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Calls `visit` with each entry from `frontier`'s size to the checkpoint's, and returns the
    /// tree they grow `frontier` into, which must have the checkpoint's root (else
    /// ``TileError/mismatch(_:)``).
    func entries(checkpoint: LogCheckpoint, from frontier: MerkleFrontier,
                 visit: (Int64, [UInt8]) async throws -> Void) async throws -> MerkleFrontier {
        guard checkpoint.size >= frontier.size else {
            throw TileError.mismatch("the checkpoint's size \(checkpoint.size) is below the \(frontier.size) already seen: the log shrank")
        }
        switch source {
        case let .published(log, _):
            return try await PublishedLogAudit.check(log, checkpoint: checkpoint, from: frontier, visit: visit).0
        case let .socket(global):
            var tree = frontier
            let connection = try global.connect()
            while tree.size < checkpoint.size {
                let limit = Int(min(1000, checkpoint.size - tree.size))
                let reply = try connection.call("admin.exportLedger", ["afterSeq": tree.size, "limit": limit])
                    .requireAccepted("admin.exportLedger")
                guard let page = reply.result?["entries"]?.arrayValue, !page.isEmpty else {
                    throw TileError.mismatch("the log has \(tree.size) entries, fewer than its checkpoint's \(checkpoint.size)")
                }
                for entry in page {
                    guard let jws = entry["payloadSignature"]?.stringValue, entry["seq"]?.intValue == tree.size + 1 else {
                        throw TileError.mismatch("admin.exportLedger gave an entry out of order at \(tree.size)")
                    }
                    let bytes = Array(jws.utf8)
                    try await visit(tree.size, bytes)
                    _ = tree.append(leafHash: MerkleHash.leaf(bytes))
                    if tree.size == checkpoint.size { break }
                }
            }
            guard tree.root == checkpoint.rootHash else {
                throw TileError.mismatch("the entries up to \(checkpoint.size) do not hash to the checkpoint's root: this is another history")
            }
            return tree
        }
    }
}
