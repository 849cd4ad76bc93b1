import StepSignProtocol

/// What one step-up approves (SPEC §3.2, §3.4): one payload with its reason, or a batch's
/// manifest, for one user. The authenticators build their challenges from it, so a device or
/// the IDV server shows, and binds, exactly this.
struct StepUpSubject: Sendable {
    enum Operation: Sendable {
        case payload(String, reason: String)
        case batch(BatchManifest)
        /// An approver's answer to a request (SPEC §3.4).
        case approval(ApprovalDecision)
    }

    var user: String
    var operation: Operation

    /// The batch's manifest, shown in the challenge event; nil for one payload.
    var manifest: BatchManifest? {
        if case let .batch(manifest) = operation { return manifest }
        return nil
    }

    /// The bytes an LDA device signs for this subject (``DeviceChallengeText``).
    func deviceChallengeText(nonce: String, peer: Peer) -> [UInt8] {
        switch operation {
        case let .payload(payload, reason):
            DeviceChallengeText.bytes(nonce: nonce, user: user, payload: payload, reason: reason, peer: peer)
        case let .batch(manifest):
            DeviceChallengeText.batchBytes(nonce: nonce, user: user, manifest: manifest, peer: peer)
        case let .approval(decision):
            decision.text(version: ApprovalDecision.deviceVersion, nonce: nonce)
        }
    }

    /// The operation text the IDV server shows and binds with `txn` (``IDVChallengeText``).
    func idvChallengeText(nonce: String, peer: Peer) -> [UInt8] {
        switch operation {
        case let .payload(payload, reason):
            IDVChallengeText.bytes(nonce: nonce, user: user, payload: payload, reason: reason, peer: peer)
        case let .batch(manifest):
            IDVChallengeText.batchBytes(nonce: nonce, user: user, manifest: manifest, peer: peer)
        case let .approval(decision):
            decision.text(version: ApprovalDecision.idvVersion, nonce: nonce)
        }
    }
}
