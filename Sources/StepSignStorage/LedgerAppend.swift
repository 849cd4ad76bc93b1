import StepSignFormat
import StepSignProtocol

/// One signature to append to the ledger; the store adds the sequence number and hashes.
public struct LedgerAppend: Sendable, Equatable {
    /// The signature ID (UUIDv7, the JWS `jti`); unique in the ledger.
    public var signatureID: String
    /// The user the signature was made for.
    public var user: String
    /// The JWS `iat`, Unix seconds.
    public var iat: Int64
    /// The kid of the signing key.
    public var kid: String
    /// The JWS in compact serialization.
    public let jws: String
    /// SHA-256 of the JWS's bytes, the inner hash of its ledger entry hash
    /// (``LedgerChain/jwsDigest(_:)``). Made with the value, on the caller's thread, so that
    /// the single ledger writer only chains 64 bytes per row.
    public let jwsDigest: [UInt8]
    /// The entry's leaf hash in the log's Merkle tree, SHA-256(0x00 ‖ JWS) (SPEC §5.5), made
    /// with the value like ``jwsDigest``.
    public let leafHash: [UInt8]
    /// Who asked for the signature.
    public var peer: LedgerPeer
    /// The authentication level of the signature.
    public var authLevel: Int
    /// For an event about a request for approval (SPEC §3.4), the request's ID: the store binds
    /// the request's sealed state to this entry in the transaction that appends it.
    public var approvalID: String?

    /// The `authLevel` of an event's row (SPEC §5.4): it authenticates no one.
    public static let eventAuthLevel = -1

    public init(signatureID: String, user: String, iat: Int64, kid: String, jws: String, peer: LedgerPeer, authLevel: Int,
                approvalID: String? = nil) {
        self.signatureID = signatureID
        self.user = user
        self.iat = iat
        self.kid = kid
        self.jws = jws
        self.jwsDigest = LedgerChain.jwsDigest(jws)
        self.leafHash = MerkleHash.leaf(jws.utf8)
        self.peer = peer
        self.authLevel = authLevel
        self.approvalID = approvalID
    }

    /// The users `batch`'s events name, each once, in order: the records a store seals again,
    /// bound to those events, in the transaction that appends them (SPEC §5.4).
    package static func usersNamedByEvents(_ batch: [LedgerAppend]) -> [String] {
        var names: [String] = []
        for item in batch where item.authLevel < 0 && !item.user.isEmpty && !names.contains(item.user) {
            names.append(item.user)
        }
        return names
    }

    /// The requests for approval `batch`'s events name, each once, in order.
    package static func approvalsNamedByEvents(_ batch: [LedgerAppend]) -> [String] {
        var ids: [String] = []
        for item in batch where item.authLevel < 0 {
            if let id = item.approvalID, !ids.contains(where: { ScalarText.equal($0, id) }) { ids.append(id) }
        }
        return ids
    }
}
