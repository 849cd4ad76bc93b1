import Foundation

/// A claim of one `idempotencyKey` by a signing request (SPEC §3): who sent it (the peer uid,
/// keys are per uid), the request's parameter digest, the signature IDs it signs under, how
/// long it may stay pending and how long the key is remembered.
public struct IdempotencyClaim: Sendable, Equatable {
    /// The longest key: 64 ASCII characters (SPEC §3).
    public static let maxKeyLength = 64

    public let peerUID: Int64
    public let key: String
    /// SHA-256 over the canonical encoding of the request's user, payloads, reasons, level
    /// and type (32 bytes).
    public let digest: Data
    /// The signature IDs reserved for the request, in order (one per payload).
    public let signatureIDs: [String]
    /// Until when a pending claim blocks its key: past it (its owner died), a repeat may claim
    /// again unless one of its signature IDs is in the ledger.
    public let pendingUntil: Date
    /// Until when the key is remembered (`signing.idempotency_seconds` from the claim).
    public let expiresAt: Date

    /// This claim signing under `ids` instead (a takeover, ``IdempotencyOutcome/takenOver(signatureIDs:)``).
    public func signing(under ids: [String]) -> IdempotencyClaim {
        IdempotencyClaim(peerUID: peerUID, key: key, digest: digest, signatureIDs: ids, pendingUntil: pendingUntil, expiresAt: expiresAt)
    }

    public init(peerUID: Int64, key: String, digest: Data, signatureIDs: [String], pendingUntil: Date, expiresAt: Date) {
        self.peerUID = peerUID
        self.key = key
        self.digest = digest
        self.signatureIDs = signatureIDs
        self.pendingUntil = pendingUntil
        self.expiresAt = expiresAt
    }

    /// Whether `key` is a valid `idempotencyKey`: 1–64 printable ASCII characters.
    public static func isValidKey(_ key: String) -> Bool {
        let scalars = key.unicodeScalars
        return !scalars.isEmpty && scalars.count <= maxKeyLength && scalars.allSatisfy { $0.value >= 0x20 && $0.value <= 0x7E }
    }
}

/// What ``IdempotencyStore/claimIdempotencyKey(_:now:)`` found.
public enum IdempotencyOutcome: Sendable, Equatable {
    /// The key is this request's: it signs under the claim's signature IDs.
    case claimed
    /// The key's first request died before signing and this one takes it over, signing under
    /// the first one's signature IDs: should the first still sign late, the ledger's unique
    /// signature IDs let only one of the two in (never a second signature).
    case takenOver(signatureIDs: [String])
    /// The key's first request is still open (its challenge, or its commit in flight): 14.
    case inFlight
    /// The key's first request signed these: the reply is rebuilt from their ledger rows.
    case replay(signatureIDs: [String])
    /// The key was used for other parameters: 4.
    case mismatch
}
