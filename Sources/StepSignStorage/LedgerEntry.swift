import Foundation
import StepSignFormat

/// A stored ledger row (SPEC §5).
public struct LedgerEntry: Sendable, Equatable {
    /// The sequence number: 1, 2, … with no gaps.
    public var seq: Int64
    /// The signature ID (UUIDv7, the JWS `jti`).
    public var signatureID: String
    /// The user the signature was made for.
    public var user: String
    /// The JWS `iat`, Unix seconds.
    public var iat: Int64
    /// The kid of the signing key.
    public var kid: String
    /// The JWS in compact serialization.
    public var jws: String
    /// Who asked for the signature.
    public var peer: LedgerPeer
    /// The authentication level of the signature.
    public var authLevel: Int
    /// The previous entry's hash; 32 zero bytes for the first entry.
    public var prevHash: [UInt8]
    /// SHA-256(prevHash || SHA-256(jws)).
    public var entryHash: [UInt8]
    /// When the row was written.
    public var createdAt: Date

    public init(
        seq: Int64,
        signatureID: String,
        user: String,
        iat: Int64,
        kid: String,
        jws: String,
        peer: LedgerPeer,
        authLevel: Int,
        prevHash: [UInt8],
        entryHash: [UInt8],
        createdAt: Date
    ) {
        self.seq = seq
        self.signatureID = signatureID
        self.user = user
        self.iat = iat
        self.kid = kid
        self.jws = jws
        self.peer = peer
        self.authLevel = authLevel
        self.prevHash = prevHash
        self.entryHash = entryHash
        self.createdAt = createdAt
    }

    /// The entry as far as the hash chain is concerned.
    public var link: LedgerLink {
        LedgerLink(seq: seq, signatureID: signatureID, payloadSignature: jws, prevHash: prevHash, entryHash: entryHash)
    }
}
