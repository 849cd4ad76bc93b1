import Foundation

/// The `idempotencyKey`s of signing requests (SPEC §3, "Idempotent retries"), kept in the store
/// so that they outlive a restart and are shared by every daemon on a PostgreSQL database.
///
/// A key is claimed before its request signs, with the signature IDs the request will sign
/// under reserved in the claim. A claim is done once it is marked so, or once any of its
/// signature IDs is in the ledger: so a daemon killed between the ledger's commit and the
/// mark leaves a claim that the next retry finds done, never one that signs again.
public protocol IdempotencyStore: Sendable {
    /// Claims `claim`'s key for its peer uid, in one atomic step. Keys whose `expiresAt`
    /// passed before `now` are forgotten first. A key not held (or held by a pending claim
    /// whose `pendingUntil` passed and none of whose signature IDs is in the ledger) is
    /// claimed: ``IdempotencyOutcome/claimed``. A key held for other parameters (another
    /// digest) is ``IdempotencyOutcome/mismatch``; one held by a done claim (marked, or with
    /// a signature ID in the ledger) is ``IdempotencyOutcome/replay(signatureIDs:)``; one held
    /// by a pending claim still within its `pendingUntil` is ``IdempotencyOutcome/inFlight``.
    func claimIdempotencyKey(_ claim: IdempotencyClaim, now: Date) async throws -> IdempotencyOutcome

    /// Marks `claim` done (its signatures are in the ledger). Does nothing when the key is no
    /// longer held by this claim (the same signature IDs).
    func completeIdempotencyKey(_ claim: IdempotencyClaim) async throws

    /// Gives `claim`'s key up while it is still pending and none of its signature IDs is in
    /// the ledger (its request ended without signing: the challenge was cancelled, the
    /// connection closed, the step-up failed); whether it was given up. The key stays with its
    /// parameters and signature IDs until it expires: a repeat takes it over under the same
    /// IDs (``IdempotencyOutcome/takenOver(signatureIDs:)``), so of all the requests that ever
    /// held a key at most one signature lands, and other parameters stay a mismatch.
    @discardableResult
    func releaseIdempotencyKey(_ claim: IdempotencyClaim) async throws -> Bool
}
