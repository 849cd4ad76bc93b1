import Foundation

/// One stored `idempotencyKey` of a signing request (SPEC §3), as a store keeps it: what
/// `stepsign admin migrate` copies row by row, so a client's retry after the move is answered
/// from the same claim.
public struct IdempotencyKeyRecord: Sendable, Equatable {
    /// The uid of the peer that sent it (keys are per uid).
    public var peerUID: Int64
    public var key: String
    /// The request's parameter digest (32 bytes).
    public var digest: Data
    /// The signature IDs reserved for the request, in order.
    public var signatureIDs: [String]
    /// Whether one of them is known to be in the ledger.
    public var done: Bool
    /// Until when a pending claim blocks its key; far in the past once its owner gave it up.
    public var pendingUntil: Date
    /// When the key is forgotten.
    public var expiresAt: Date

    public init(peerUID: Int64, key: String, digest: Data, signatureIDs: [String], done: Bool, pendingUntil: Date,
                expiresAt: Date) {
        self.peerUID = peerUID
        self.key = key
        self.digest = digest
        self.signatureIDs = signatureIDs
        self.done = done
        self.pendingUntil = pendingUntil
        self.expiresAt = expiresAt
    }
}
