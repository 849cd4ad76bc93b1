import Foundation
import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import StepSignStorage

/// What a signing request's `idempotencyKey` (SPEC §3, "Idempotent retries") gives it before
/// it opens a step-up or signs.
enum IdempotencyStart {
    /// The request has no key.
    case none
    /// The key is the request's: it signs under the claim's signature IDs.
    case claimed(IdempotencyClaim)
    /// The key's first request signed these entries: its reply is given again.
    case replay([LedgerEntry])
}

extension Engine {
    /// Claims `key` for a request of `session`'s peer uid whose user, items (payload and
    /// reason each), level and type are given; `batch` tells the two operations apart. An
    /// invalid key or one used for other parameters is 4, one whose first request has not
    /// finished is 14 (never a second signature).
    nonisolated(nonsending) func claimIdempotencyKey(_ key: String?, batch: Bool, user: String, items: [(payload: String, reason: String)],
                             level: Int, type: Int, session: Session, context: RequestContext) async throws -> IdempotencyStart {
        guard let key else { return .none }
        guard IdempotencyClaim.isValidKey(key) else {
            throw StepSignError.invalid("\"idempotencyKey\" must be 1 to \(IdempotencyClaim.maxKeyLength) printable ASCII characters")
        }
        let milliseconds = UInt64(max(0, context.now.timeIntervalSince1970 * 1000))
        let signatureIDs = try items.map { _ in try UUIDv7.generate(unixMilliseconds: milliseconds) }
        let claim = IdempotencyClaim(
            peerUID: Int64(session.peer.uid), key: key,
            digest: Self.idempotencyDigest(batch: batch, user: user, items: items, level: level, type: type),
            signatureIDs: signatureIDs,
            // A claim whose owner died stops blocking its key a minute after its challenge
            // would have expired.
            pendingUntil: context.now.addingTimeInterval(Double(context.config.server.challengeTimeoutSeconds) + 60),
            expiresAt: context.now.addingTimeInterval(Double(context.config.signing.idempotencySeconds)))
        switch try await signing.store.claimIdempotencyKey(claim, now: context.now) {
        case .claimed:
            return .claimed(claim)
        case let .takenOver(ids):
            guard ids.count == items.count else {
                throw StepSignError.internalError("internal error: the claim of this idempotencyKey does not match the request")
            }
            return .claimed(claim.signing(under: ids))
        case .inFlight:
            throw StepSignError(.busy, "a request with this idempotencyKey has not finished yet; retry once it has")
        case .mismatch:
            throw StepSignError.invalid("\"idempotencyKey\" was used for a request with other parameters")
        case let .replay(ids):
            var entries: [LedgerEntry] = []
            for id in ids {
                guard let entry = try await signing.store.ledgerEntry(signatureID: id) else {
                    throw StepSignError.internalError("internal error: a signature of this idempotencyKey is missing from the ledger")
                }
                entries.append(entry)
            }
            guard entries.count == items.count else {
                throw StepSignError.internalError("internal error: the signatures of this idempotencyKey do not match the request")
            }
            return .replay(entries)
        }
    }

    /// SHA-256 over the canonical encoding of a signing request's parameters: a version tag,
    /// then the operation, user, level, type, item count and each item's payload and reason,
    /// each as a 4-byte big-endian length and its UTF-8 bytes (so no two requests share one).
    static func idempotencyDigest(batch: Bool, user: String, items: [(payload: String, reason: String)],
                                  level: Int, type: Int) -> Data {
        var bytes: [UInt8] = []
        func field(_ text: String) {
            let utf8 = Array(text.utf8)
            withUnsafeBytes(of: UInt32(utf8.count).bigEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: utf8)
        }
        field("stepsign-idempotency-v1")
        field(batch ? "authenticateUserAndSignBatch" : "authenticateUserAndSignData")
        field(user)
        field(String(level))
        field(String(type))
        field(String(items.count))
        for item in items {
            field(item.payload)
            field(item.reason)
        }
        return Data(SHA256.hash(bytes))
    }

    /// The details `entry` was first answered with, rebuilt from its row and its JWS's claims,
    /// marked `replayed`.
    func replayedDetails(of request: SigningRequest, entry: LedgerEntry) throws -> (SigningDetails, SignatureClaims) {
        let claims: SignatureClaims
        do {
            claims = try JSONDecoder().decode(SignatureClaims.self, from: Data(JWS.parse(entry.jws).payload))
        } catch {
            throw StepSignError.internalError("internal error: a signature of this idempotencyKey cannot be read back")
        }
        var details = request.details(signature: entry.jws, signatureID: entry.signatureID, authenticatorUsed: claims.authenticatorUsed)
        details.logIndex = entry.seq - 1
        details.reusedFrom = claims.stepUp?.reusedFrom
        details.replayed = true
        return (details, claims)
    }

    /// The reply a signing's first request got, again (nothing is signed now).
    func replaySigning(_ request: SigningRequest, entry: LedgerEntry, session: inout Session) throws -> Reply {
        let (details, _) = try replayedDetails(of: request, entry: entry)
        session.signatureIDs.insert(details.dataSignatureID)
        logger.info("signing replayed", metadata: ["user": .string(request.user), "signatureID": .string(details.dataSignatureID),
                                                   "peerUID": "\(session.peer.uid)"])
        return Reply(events: [.onAuthenticateUserAndSignData(details: details, status: .success)])
    }

    /// The reply a batch's first request got, again (nothing is signed now).
    func replayBatch(_ batch: SigningBatch, entries: [LedgerEntry], session: inout Session) throws -> Reply {
        var signatures: [SigningDetails] = []
        var batchID = ""
        for (item, entry) in zip(batch.items, entries) {
            let (details, claims) = try replayedDetails(of: item, entry: entry)
            batchID = claims.batch?.id ?? batchID
            session.signatureIDs.insert(details.dataSignatureID)
            signatures.append(details)
        }
        var signed = BatchSignatures(batchID: batchID, manifest: batch.manifest, signatures: signatures)
        signed.replayed = true
        logger.info("batch replayed", metadata: ["user": .string(batch.user), "batchID": .string(batchID),
                                                 "peerUID": "\(session.peer.uid)"])
        return Reply(events: [.onAuthenticateUserAndSignBatch(batch: signed, status: .success)])
    }

    /// Marks `claim` done once its signatures are committed. A failure is only logged: the
    /// ledger's entries under its signature IDs mark it done anyway.
    nonisolated(nonsending) func completeIdempotency(_ claim: IdempotencyClaim?) async {
        guard let claim else { return }
        do { try await signing.store.completeIdempotencyKey(claim) } catch {
            logger.warning("idempotencyKey not marked done (its ledger entries mark it)", metadata: ["error": "\(error)"])
        }
    }

    /// The connection of `session` closed: an `idempotencyKey` claimed by its open signing
    /// challenge is given up.
    public func sessionClosed(_ session: Session) async {
        guard case let .signing(challenge)? = session.pending else { return }
        await releaseIdempotency(challenge.work.idempotency)
    }

    /// Gives `claim`'s key up: its request ended without signing. A failure is only logged:
    /// the claim stops blocking its key at its `pendingUntil`.
    func releaseIdempotency(_ claim: IdempotencyClaim?) async {
        guard let claim else { return }
        do { try await signing.store.releaseIdempotencyKey(claim) } catch {
            logger.warning("idempotencyKey not given up (it frees itself when its claim expires)", metadata: ["error": "\(error)"])
        }
    }
}
