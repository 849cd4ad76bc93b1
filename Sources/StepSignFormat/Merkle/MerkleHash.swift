import StepSignCrypto

/// The hashes of the ledger's Merkle tree (SPEC §5.5; RFC 9162 §2.1.1, as Certificate
/// Transparency 2.0 and C2SP tlog-checkpoint define them): a leaf is SHA-256(0x00 ‖ data), an
/// inner node SHA-256(0x01 ‖ left ‖ right), the empty tree SHA-256 of nothing. The prefixes
/// keep a leaf from ever passing for a node (second preimages).
public enum MerkleHash {
    /// The size of every hash of the tree.
    public static let size = 32

    /// The hash of a leaf whose data is `data` (a ledger entry's JWS bytes).
    public static func leaf(_ data: some Collection<UInt8>) -> [UInt8] {
        SHA256.hash(prefix: 0x00, data)
    }

    /// The hash of the inner node over `left` and `right`.
    public static func node(_ left: [UInt8], _ right: [UInt8]) -> [UInt8] {
        SHA256.hash(prefix: 0x01, left, right)
    }

    /// The root of the empty tree.
    public static let emptyRoot: [UInt8] = SHA256.hash([UInt8]())
}
