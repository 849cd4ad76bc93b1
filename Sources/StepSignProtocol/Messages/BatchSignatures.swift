/// The outcome of `authenticateUserAndSignBatch` (SPEC §3.4), the event
/// `onAuthenticateUserAndSignBatch`: the batch's ID and manifest and every item's signature
/// details, in the order of the request's items; none when nothing was signed.
public struct BatchSignatures: Sendable, Equatable {
    /// The batch ID (UUIDv7, as the claims' `batch.id`); empty when nothing was signed.
    public var batchID: String
    public var manifest: BatchManifest
    /// One per item, in order (each as `onAuthenticateUserAndSignData`'s `details`); empty
    /// when nothing was signed.
    public var signatures: [SigningDetails]
    /// True when this reply repeats the one a request with the same `idempotencyKey` got
    /// (SPEC §3): nothing was signed now. The member is left out when false.
    public var replayed = false

    public init(batchID: String, manifest: BatchManifest, signatures: [SigningDetails]) {
        self.batchID = batchID
        self.manifest = manifest
        self.signatures = signatures
    }
}
