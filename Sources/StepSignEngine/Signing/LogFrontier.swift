import NIOConcurrencyHelpers
import StepSignFormat
import StepSignStorage

/// The right edge of the log's Merkle tree and the head of its hash chain, computed by this
/// daemon from entries, never from stored nodes alone (SPEC §5.5, "roots from entries"): the
/// root of every checkpoint the daemon signs is checked against it.
///
/// It is built at start from the checkpoint this daemon keeps (the stored nodes of that size
/// must give the kept root; every entry after it is read and hashed from its JWS), and moved on
/// by each batch the ledger writer commits (the entries as stored, chained onto it) and by the
/// entries other daemons append (read after its tail and hashed, on PostgreSQL). An entry that
/// does not chain onto it, or whose hash is not the one of its JWS, and a stored node that is
/// not the one its entries make, is a ``Disagreement``: the caller stops signing.
final class LogFrontier: Sendable {
    /// A tree size with the hash of its last entry and the tree's right edge.
    struct Tail: Sendable, Equatable {
        var size: Int64
        var chainHash: [UInt8]
        var tree: MerkleFrontier

        static let empty = Tail(size: 0, chainHash: LedgerChain.genesisHash, tree: MerkleFrontier())
    }

    /// Something stored disagrees with the entries (or with what this daemon computed of them).
    struct Disagreement: Error, CustomStringConvertible {
        var description: String
    }

    private let store: any LedgerStore
    private let state = NIOLockedValueBox<Tail?>(nil)
    /// Entries read at a time when catching up or rebuilding.
    private let pageSize = 1024

    init(store: any LedgerStore) {
        self.store = store
    }

    /// The tail as computed, nil before it is built.
    var current: Tail? { state.withLockedValue { $0 } }

    /// Forgets the tail (the log was replaced: `admin.recover`); the next use builds it again.
    func reset() {
        state.withLockedValue { $0 = nil }
    }

    /// The tail, built first from `kept` (the checkpoint this daemon keeps) if it was not yet.
    func ready(kept: LogCheckpoint?, head: KeptChainHead.Head?) async throws -> Tail {
        if let tail = current { return tail }
        return try await rebuild(from: kept, head: head)
    }

    /// Builds the tail from the checkpoint `kept` up (SPEC §5.5): the stored nodes of its size
    /// must give its root; `head` (the hash of an entry this daemon chained itself, kept beside
    /// the checkpoint) must still be that entry's; every entry after it is read, checked and
    /// hashed, and every node it completes must be the stored one.
    @discardableResult
    func rebuild(from kept: LogCheckpoint?, head: KeptChainHead.Head?) async throws -> Tail {
        var tail = Tail.empty
        if let kept, kept.size > 0 {
            let nodes = MerkleTree.subtrees(of: 0..<kept.size)
            let stored = try await store.ledgerTreeHashes(nodes)
            let hashes = nodes.compactMap { stored[$0] }
            guard hashes.count == nodes.count, let tree = try? MerkleFrontier(size: kept.size, hashes: hashes) else {
                throw Disagreement(description: "the stored tree lacks nodes of the checkpoint of \(kept.size) entries this daemon signed")
            }
            guard tree.root == kept.rootHash else {
                throw Disagreement(description: "a stored node disagrees with the checkpoint of \(kept.size) entries this daemon signed: the tree of \(kept.size) entries has another root")
            }
            guard let entry = try await store.ledgerEntries(afterSeq: kept.size - 1, limit: 1).first, entry.seq == kept.size else {
                throw Disagreement(description: "the log has fewer than the \(kept.size) entries of the checkpoint this daemon signed: it was cut or rolled back")
            }
            tail = Tail(size: kept.size, chainHash: entry.entryHash, tree: tree)
        }
        if let head, head.size > 0 {
            if let entry = try await store.ledgerEntries(afterSeq: head.size - 1, limit: 1).first, entry.seq == head.size,
               entry.entryHash != head.entryHash {
                throw Disagreement(description: Self.rechained(head.size))
            }
        }
        tail = try await extended(tail, checkNodes: true)
        state.withLockedValue { $0 = tail }
        return tail
    }

    /// Reads the entries after the tail (other daemons' appends), checks and hashes them, and
    /// moves the tail past them; the stored entry at the tail's size must still have the hash
    /// this daemon computed (one read, with the first page). With `checkNodes` the nodes they
    /// complete are compared with the stored ones too (one more read); the ledger writer's
    /// catch-up after each batch leaves that to the checkpoints, whose roots are compared.
    /// Returns how many were read.
    @discardableResult
    func catchUp(kept: LogCheckpoint?, head: KeptChainHead.Head?, checkNodes: Bool = true) async throws -> Int64 {
        while true {
            guard let from = current else {
                let built = try await rebuild(from: kept, head: head)
                return built.size - (kept?.size ?? 0)
            }
            var page = try await store.ledgerEntries(afterSeq: max(from.size - 1, 0), limit: pageSize)
            if from.size > 0 {
                guard let first = page.first, first.seq == from.size else {
                    throw Disagreement(description: "the log has fewer than the \(from.size) entries this daemon computed its tree of: it was cut or rolled back")
                }
                guard first.entryHash == from.chainHash else {
                    throw Disagreement(description: Self.rechained(from.size))
                }
                page.removeFirst()
            }
            if page.isEmpty { return 0 }
            var tail = from
            let nodes = try Self.extend(&tail, with: page)
            if checkNodes { try await check(nodes) }
            tail = try await extended(tail, checkNodes: checkNodes)
            let moved = state.withLockedValue { state -> Bool in
                guard state == from else { return false }
                state = tail
                return true
            }
            if moved { return tail.size - from.size }
        }
    }

    static func rechained(_ seq: Int64) -> String {
        "entry \(seq) no longer has the hash this daemon chained it to: entries at or below it were rewritten, reordered or re-chained"
    }

    /// After `batch`, computed on `prepared`, was committed as `entries` (in order; its rows'
    /// JWS digests and leaf hashes were made on the callers' threads): the tail moved past
    /// them, with the entries other daemons appended before them read first.
    ///
    /// When the entries stored are the batch's own, right after `prepared`, and the tail is
    /// still `prepared`, the batch's chain head and tree are taken as they are: they were
    /// computed from these entries (the same JWS digests and leaf hashes, chained and appended
    /// onto the same tail), so hashing them again would give the same values (issue 43).
    func advance(prepared: Tail, past entries: [LedgerEntry], batch: LedgerCommit, kept: LogCheckpoint?,
                 head: KeptChainHead.Head?) async throws {
        guard let first = entries.first, let last = entries.last else { return }
        guard first.seq - 1 >= prepared.size else {
            throw Disagreement(description: "entries were appended at log index \(first.seq - 1), below the \(prepared.size) entries this daemon's tree had: the log was cut or rolled back")
        }
        if let after = Self.tail(after: batch, on: prepared, stored: entries) {
            let moved = state.withLockedValue { state -> Bool in
                guard state == prepared else { return false }
                state = after
                return true
            }
            if moved { return }
        }
        let rows = batch.items
        while true {
            let from = try await ready(kept: kept, head: head)
            if from.size >= last.seq { return }
            if from.size < first.seq - 1 {
                try await catchUp(kept: kept, head: head, checkNodes: false)
                continue
            }
            var tail = from
            let skip = Int(from.size - (first.seq - 1))
            _ = try Self.extend(&tail, with: entries[skip...], rows: rows.count == entries.count ? rows[skip...] : nil)
            let moved = state.withLockedValue { state -> Bool in
                guard state == from else { return false }
                state = tail
                return true
            }
            if moved { return }
        }
    }

    /// The tail after `batch` when `entries` are exactly the batch's rows as it computed them
    /// (numbers, JWS, chain) on `prepared`; nil otherwise (another daemon's entries came
    /// between, or the store gave back other rows), when each entry is checked and hashed.
    static func tail(after batch: LedgerCommit, on prepared: Tail, stored entries: [LedgerEntry]) -> Tail? {
        guard batch.expected.seq == prepared.size, batch.expected.entryHash == prepared.chainHash,
              let last = batch.entries.last, batch.tree.size == last.seq, entries.count == batch.entries.count
        else { return nil }
        for (stored, made) in zip(entries, batch.entries) {
            guard stored.seq == made.seq, stored.prevHash == made.prevHash, stored.entryHash == made.entryHash,
                  stored.signatureID == made.signatureID, stored.jws == made.jws
            else { return nil }
        }
        return Tail(size: last.seq, chainHash: last.entryHash, tree: batch.tree)
    }

    /// `tail` extended by every entry stored after it, read a page at a time; with
    /// `checkNodes`, the nodes the entries complete are compared with the stored ones.
    private func extended(_ start: Tail, checkNodes: Bool) async throws -> Tail {
        var tail = start
        while true {
            let entries = try await store.ledgerEntries(afterSeq: tail.size, limit: pageSize)
            if entries.isEmpty { return tail }
            let nodes = try Self.extend(&tail, with: entries)
            if checkNodes { try await check(nodes) }
        }
    }

    /// Compares `nodes`, computed from entries, with the stored ones.
    private func check(_ nodes: [(MerkleNode, [UInt8])]) async throws {
        guard !nodes.isEmpty else { return }
        let stored = try await store.ledgerTreeHashes(nodes.map(\.0))
        for (node, hash) in nodes where stored[node] != hash {
            let first = node.index << node.level + 1, last = (node.index + 1) << node.level
            throw Disagreement(description: stored[node] == nil
                ? "the stored tree lacks the node of entries \(first)…\(last)"
                : "a stored node disagrees with the entries: the node of entries \(first)…\(last) is not their hash")
        }
    }

    /// Chains and hashes `entries` onto `tail`, checking each: its seq follows, its previous
    /// hash is the tail's, its hash is that of its JWS. Returns the interior nodes they complete.
    private static func extend(_ tail: inout Tail, with entries: some Collection<LedgerEntry>,
                               rows: ArraySlice<LedgerAppend>? = nil) throws -> [(MerkleNode, [UInt8])] {
        var nodes: [(MerkleNode, [UInt8])] = []
        var row = rows?.startIndex
        for entry in entries {
            // The batch's own rows carry their JWS's digest and leaf hash (the same JWS).
            let made = row.flatMap { rows?[$0] }
            if let index = row { row = index + 1 }
            guard entry.seq == tail.size + 1 else {
                throw Disagreement(description: "entry \(entry.seq) follows entry \(tail.size): the ledger has a gap")
            }
            guard entry.prevHash == tail.chainHash else {
                throw Disagreement(description: "entry \(entry.seq) does not chain to entry \(tail.size) as this daemon computed it: entries were rewritten, reordered or re-chained")
            }
            let hash: [UInt8], leaf: [UInt8]
            if let made, made.signatureID == entry.signatureID, made.jws == entry.jws {
                hash = LedgerChain.entryHash(previous: tail.chainHash, jwsDigest: made.jwsDigest)
                leaf = made.leafHash
            } else {
                hash = LedgerChain.entryHash(previous: tail.chainHash, jws: entry.jws)
                leaf = MerkleHash.leaf(entry.jws.utf8)
            }
            guard entry.entryHash == hash else {
                throw Disagreement(description: "entry \(entry.seq)'s stored hash is not the hash of its JWS")
            }
            nodes += tail.tree.append(leafHash: leaf).filter { $0.0.level > 0 }
            tail.chainHash = hash
            tail.size = entry.seq
        }
        return nodes
    }
}
