import StepSignCrypto

/// The root of a batch's manifest (SPEC §3.4): the RFC 9162 Merkle root over the SHA-256 of
/// each payload's UTF-8 bytes, in order; the leaf data of the tree is that 32-byte hash.
///
/// An item's `batch.root` claim with its `index` and `count` lets anyone holding the batch's
/// payloads (or their hashes) recompute what its one step-up approved.
public enum BatchRoot {
    /// The root over `payloads`, in order (the empty tree's for none).
    public static func of(payloads: some Sequence<String>) -> [UInt8] {
        var frontier = MerkleFrontier()
        for payload in payloads {
            _ = frontier.append(leafHash: MerkleHash.leaf(SHA256.hash(Array(payload.utf8))))
        }
        return frontier.root
    }
}
