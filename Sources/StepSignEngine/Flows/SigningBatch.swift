import StepSignStorage
import StepSignCrypto
import StepSignFormat
import StepSignProtocol

/// A validated `authenticateUserAndSignBatch` request (SPEC §3.4): its items, each checked as
/// one `authenticateUserAndSignData` payload and reason, and the manifest its one step-up
/// approves.
struct SigningBatch: Sendable {
    var user: String
    var authLevel: Int
    var authenticatorType: Int
    /// The items in order, each as the request it would be alone.
    var items: [SigningRequest]
    var manifest: BatchManifest
    /// Its claim of an `idempotencyKey` (SPEC §3), as ``SigningRequest/idempotency``.
    var idempotency: IdempotencyClaim? = nil

    /// Checks `parameters`' items for `user`: 1 to `maxItems` of them, each payload and reason
    /// within SPEC §3.2's limits (error 4 naming the item otherwise), and computes the manifest.
    init(user: String, parameters: SignBatchParameters, maxItems: Int) throws(StepSignError) {
        guard parameters.items.count <= maxItems else {
            throw .invalid("a batch may have at most \(maxItems) items (signing.max_batch_items), got \(parameters.items.count)")
        }
        var items: [SigningRequest] = []
        items.reserveCapacity(parameters.items.count)
        var bytes = 0
        var reasons: [String] = []
        var seenReasons: Set<String> = []
        for (index, item) in parameters.items.enumerated() {
            let length: Int
            do {
                length = try SigningRequest.validate(text: item.payload, name: "payload", limit: SigningRequest.payloadLimit)
                try SigningRequest.validate(text: item.reason, name: "reason", limit: SigningRequest.reasonLimit, singleLine: true)
            } catch {
                throw .invalid("items[\(index)]: \(error.message)")
            }
            items.append(SigningRequest(user: user, payload: item.payload, payloadLength: length, reason: item.reason,
                                        authLevel: parameters.authLevel, authenticatorType: parameters.authenticatorType))
            bytes += item.payload.utf8.count
            if seenReasons.insert(item.reason).inserted { reasons.append(item.reason) }
        }
        self.user = user
        self.authLevel = parameters.authLevel
        self.authenticatorType = parameters.authenticatorType
        self.items = items
        self.manifest = BatchManifest(count: items.count, bytes: bytes,
                                      root: Base64.encode(BatchRoot.of(payloads: items.lazy.map(\.payload))),
                                      reasons: reasons)
    }

    /// What its step-up approves: the manifest.
    var subject: StepUpSubject { StepUpSubject(user: user, operation: .batch(manifest)) }

    /// The batch's outcome event when nothing was signed (status 118 or 153).
    func unsigned(status: Status) -> Event {
        .onAuthenticateUserAndSignBatch(batch: BatchSignatures(batchID: "", manifest: manifest, signatures: []), status: status)
    }
}
