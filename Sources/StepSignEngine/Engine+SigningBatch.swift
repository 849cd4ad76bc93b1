import Logging
import StepSignProtocol
import StepSignStorage
import StepSignMetrics

extension Engine {
    /// `authenticateUserAndSignBatch` (SPEC §3.4): up to `signing.max_batch_items` payloads
    /// behind one step-up, whose challenge shows and binds the batch's manifest; then every
    /// item signed and committed together, or none.
    ///
    /// A batch neither uses nor opens a step-up reuse window: its step-up approves exactly
    /// the manifest it showed (docs/decisions.md).
    func authenticateUserAndSignBatch(_ parameters: SignBatchParameters, session: inout Session,
                                      context: RequestContext) async throws -> Reply {
        let user = try await signingUser(named: parameters.user, session: &session, context: context)
        var batch = try SigningBatch(user: user, parameters: parameters, maxItems: context.config.signing.maxBatchItems)
        if let index = batch.items.firstIndex(where: { context.config.approvalRule(reason: $0.reason, level: $0.authLevel) != nil }) {
            throw StepSignError(.notSupported, "items[\(index)] needs approval by several people ([[approval]]); sign it on its own")
        }
        let requirement = try signingRequirement(level: batch.authLevel, type: batch.authenticatorType, context: context)
        switch try await claimIdempotencyKey(parameters.idempotencyKey, batch: true, user: user,
                                             items: batch.items.map { ($0.payload, $0.reason) }, level: batch.authLevel,
                                             type: batch.authenticatorType, session: session, context: context) {
        case .none: break
        case let .claimed(claim): batch.idempotency = claim
        case let .replay(entries): return try replayBatch(batch, entries: entries, session: &session)
        }
        do {
            if requirement == .none {
                return try await finishBatch(batch, authenticatorUsed: "none", session: &session, context: context)
            }
            return try await openFirstStepUp(.batch(batch), requirement: requirement, session: &session, context: context)
        } catch {
            await releaseIdempotency(batch.idempotency)
            throw error
        }
    }

    /// Signs every item of `batch`, waits for the one durable transaction that holds them all,
    /// and answers `onAuthenticateUserAndSignBatch`.
    func finishBatch(_ batch: SigningBatch, authenticatorUsed: String, session: inout Session,
                     context: RequestContext) async throws -> Reply {
        let signed: BatchSignatures
        let entries: [LedgerEntry]
        do {
            (signed, entries) = try await signing.signer.sign(batch, instance: context.config.instance, authenticatorUsed: authenticatorUsed,
                                                              peer: session.peer, now: context.now,
                                                              signatureIDs: batch.idempotency?.signatureIDs)
        } catch StorageError.signingKeyRevoked(let kid) {
            try? await signing.events.recordCreatedKeys(peer: EventRecorder.daemon, instance: context.config.instance, now: context.now)
            throw StorageError.signingKeyRevoked(kid)
        }
        for details in signed.signatures {
            session.signatureIDs.insert(details.dataSignatureID)
        }
        await completeIdempotency(batch.idempotency)
        // One audit line per batch behind a step-up; a level-0 batch is counted for the
        // summary line of its minute. Each signature's claims name the batch.
        let level: Logger.Level = batch.authLevel == 0 ? .debug : .notice
        logger.log(level: level, "signed batch", metadata: [
            "user": .string(batch.user), "batchID": .string(signed.batchID), "count": "\(batch.items.count)",
            "root": .string(batch.manifest.root), "kid": .string(entries.first?.kid ?? ""),
            "firstSeq": "\(entries.first?.seq ?? 0)", "lastSeq": "\(entries.last?.seq ?? 0)",
            "authLevel": "\(batch.authLevel)", "authenticatorUsed": .string(authenticatorUsed),
            "peerUID": "\(session.peer.uid)", "peerPID": "\(session.peer.pid)", "peerComm": .string(session.peer.comm),
        ])
        if batch.authLevel == 0 {
            logSummary(signing.levelZeroSummary.record(uid: session.peer.uid, comm: session.peer.comm, now: context.now,
                                                       count: batch.items.count))
        }
        signing.signatureCounters.increment(by: batch.items.count, level: batch.authLevel, authenticator: authenticatorUsed)
        return Reply(events: [.onAuthenticateUserAndSignBatch(batch: signed, status: .success)])
    }
}
