import Logging
import StepSignFormat
import StepSignStorage

/// The parts of the log `admin.auditVerify` checks beside the entries' chain and signatures
/// (SPEC §5.5 "the audit covers all of it"): the stored Merkle tree against the entries, the
/// epochs against the signed events that started them, and every stored cosignature against
/// its witness's key and its checkpoint. Reads only; the first problem found is returned.
struct LogAudit {
    var store: any LedgerStore & LedgerLookupStore & LogEpochStore
    var keyring: Keyring
    var logger: Logger
    /// The epochs the daemon signs by.
    var origins: LogOrigins
    /// The configured `[[witness]]` keys.
    var witnesses: [NoteVerifierKey]

    /// How many entries are read, and nodes compared, at a time.
    static let pageSize = 1024

    /// The first problem of the tree, the epochs or the cosignatures; nil when all check.
    func run() async throws -> String? {
        if let problem = try await auditTree() { return problem }
        let audited: LogOrigins
        switch try await LogEpochs(first: origins.first, store: store, keyring: keyring, logger: logger).audit(taken: origins) {
        case let .success(found): audited = found
        case let .failure(problem): return problem.text
        }
        return try await auditCheckpointsAndCosignatures(origins: audited)
    }

    /// Every complete subtree of the log's tree at its size now, hashed from the entries' JWS
    /// bytes (RFC 9162, as the daemon computes roots), against the hash the store keeps for it:
    /// one that is missing or differs is reported. Leaves are not stored (they are read from the
    /// entries), so the nodes of level 1 and up are compared, in pages.
    func auditTree() async throws -> String? {
        let size = try await store.ledgerCount()
        var frontier: [(level: Int, hash: [UInt8])] = []
        var computed: [(node: MerkleNode, hash: [UInt8])] = []
        var seq: Int64 = 0
        while seq < size {
            let entries = try await store.ledgerEntries(afterSeq: seq, limit: Self.pageSize)
            guard !entries.isEmpty else { return "the ledger has \(size) entries but none after seq \(seq)" }
            for entry in entries where entry.seq <= size {
                guard entry.seq == seq + 1 else { return "the ledger has no entry of seq \(seq + 1)" }
                seq = entry.seq
                let leaf = seq - 1
                frontier.append((0, MerkleHash.leaf(entry.jws.utf8)))
                while frontier.count >= 2, frontier[frontier.count - 1].level == frontier[frontier.count - 2].level {
                    let right = frontier.removeLast(), left = frontier.removeLast()
                    let level = right.level + 1
                    let hash = MerkleHash.node(left.hash, right.hash)
                    frontier.append((level, hash))
                    computed.append((MerkleNode(level: level, index: leaf >> level), hash))
                }
            }
            if computed.count >= Self.pageSize {
                if let problem = try await compare(computed) { return problem }
                computed.removeAll(keepingCapacity: true)
            }
        }
        return try await compare(computed)
    }

    private func compare(_ computed: [(node: MerkleNode, hash: [UInt8])]) async throws -> String? {
        guard !computed.isEmpty else { return nil }
        let stored = try await store.ledgerTreeHashes(computed.map(\.node))
        for (node, hash) in computed {
            guard let kept = stored[node] else {
                return "the stored tree lacks the hash of the subtree \(node) (leaves \(node.firstLeaf)–\(node.firstLeaf + node.width - 1))"
            }
            guard kept == hash else {
                return "the stored hash of the subtree \(node) (leaves \(node.firstLeaf)–\(node.firstLeaf + node.width - 1)) is not the one its entries make: a stored node was changed"
            }
        }
        return nil
    }

    /// Every stored checkpoint names the origin of its size's epoch, and every cosignature
    /// stored for it is a valid cosignature of its text by the configured witness its row
    /// names. Rows of a witness no longer configured cannot be checked and are left alone (they
    /// are never served either).
    func auditCheckpointsAndCosignatures(origins: LogOrigins) async throws -> String? {
        var checkedSizes = Set<Int64>()
        for record in try await store.logCheckpoints(afterSize: -1, throughSize: nil) where checkedSizes.insert(record.size).inserted {
            guard let note = try? SignedNote(parsing: record.note), let checkpoint = try? LogCheckpoint(text: note.text) else {
                return "the stored checkpoint of size \(record.size) is not a checkpoint note"
            }
            let expected = origins.origin(forSize: record.size)
            guard checkpoint.origin == expected else {
                return "the stored checkpoint of size \(record.size) names the origin \"\(checkpoint.origin)\", but the log's epochs make it \"\(expected)\""
            }
            for row in try await store.logCosignatures(size: record.size) {
                let keys = witnesses.filter { $0.name == row.witness }
                guard !keys.isEmpty else { continue }
                guard let candidate = try? SignedNote(parsing: note.text + "\n" + row.line + "\n"), candidate.signatures.count == 1,
                      !candidate.cosigners(keys).isEmpty else {
                    return "the stored cosignature of witness \(row.witness) of the checkpoint of size \(record.size) does not verify with its key over that checkpoint"
                }
            }
        }
        return nil
    }
}
