import StepSignCrypto
import StepSignProtocol
import StepSignFormat
import StepSignStorage
import struct Foundation.Date

/// Makes a signature and records it: JWS with the active key, then the durable ledger row.
struct Signer: Sendable {
    let keyring: Keyring
    let ledger: LedgerWriter
    /// Where a key in the token signs (off the cooperative pool); a key file signs inline.
    let threads: TokenSigningThreads

    /// Signs `request` for its user at `now` (the request's time: `iat` and the time in the
    /// UUIDv7 signature ID) and returns the reply details once the row is committed.
    /// `signatureID`: the ID reserved for it (an approved request's, SPEC §3.4), else a new
    /// one; `approvals`: the approvals it waited for, as the claims record them.
    nonisolated(nonsending) func sign(_ request: SigningRequest, instance: String, authenticatorUsed: String, peer: Peer,
              now: Date, reusedFrom: String? = nil, signatureID reserved: String? = nil,
              approvals: [ApprovalClaim]? = nil) async throws -> (SigningDetails, LedgerEntry) {
        let (kid, key) = keyring.signer
        let milliseconds = UInt64(max(0, now.timeIntervalSince1970 * 1000))
        let signatureID = try reserved ?? UUIDv7.generate(unixMilliseconds: milliseconds)
        let claims = SignatureClaims(
            iss: instance, sub: request.user, jti: signatureID, iat: Int64(milliseconds / 1000),
            payload: request.payload, payloadLength: request.payloadLength, reason: request.reason,
            authLevel: request.authLevel, authenticatorType: request.authenticatorType,
            authenticatorUsed: authenticatorUsed,
            peer: SignaturePeer(uid: peer.uid, pid: peer.pid, comm: peer.comm),
            stepUp: reusedFrom.map { StepUpClaim(reusedFrom: $0) },
            approvals: approvals,
            ssh: request.ssh
        )
        // A key file signs right here, without an async call (issue 43: each one is a task
        // switch check); a token key on the token's threads.
        let jws = key.tokenID == nil
            ? try StepSignSignature.make(claims: claims, key: key, kid: kid)
            : try await threads.run(inToken: true) { try StepSignSignature.make(claims: claims, key: key, kid: kid) }
        let entry: LedgerEntry
        do {
            entry = try await ledger.append(LedgerAppend(
                signatureID: signatureID, user: request.user, iat: claims.iat, kid: kid, jws: jws,
                peer: LedgerPeer(uid: peer.uid, pid: peer.pid, comm: peer.comm), authLevel: request.authLevel
            ))
        } catch StorageError.signingKeyRevoked(let revoked) {
            // Another daemon revoked this one's key (SPEC §5.2): the store refused the row, the
            // caller gets 15 (nothing signed), and the keyring makes a new key for the retry.
            if revoked == kid { try? await keyring.refresh() }
            throw StorageError.signingKeyRevoked(revoked)
        }
        var details = request.details(signature: jws, signatureID: signatureID, authenticatorUsed: authenticatorUsed)
        details.logIndex = entry.seq - 1
        details.reusedFrom = reusedFrom
        return (details, entry)
    }

    /// Signs every item of `batch` for its user at `now` (SPEC §3.4): one batch ID, each item
    /// its own signature ID, JWS (claims `batch: {id, index, count, root}`) and ledger entry,
    /// all committed in one transaction or none. Returns the reply's signatures, in order,
    /// once that transaction is durable.
    /// `signatureIDs`: the IDs reserved for its items (an `idempotencyKey`'s claim, SPEC §3),
    /// else new ones.
    func sign(_ batch: SigningBatch, instance: String, authenticatorUsed: String, peer: Peer,
              now: Date, signatureIDs reserved: [String]? = nil) async throws -> (BatchSignatures, [LedgerEntry]) {
        let (kid, key) = keyring.signer
        let milliseconds = UInt64(max(0, now.timeIntervalSince1970 * 1000))
        let batchID = try UUIDv7.generate(unixMilliseconds: milliseconds)
        let signaturePeer = SignaturePeer(uid: peer.uid, pid: peer.pid, comm: peer.comm)
        let ledgerPeer = LedgerPeer(uid: peer.uid, pid: peer.pid, comm: peer.comm)
        let (appends, signatures) = try await threads.run(inToken: key.tokenID != nil) {
            () throws -> ([LedgerAppend], [SigningDetails]) in
            var appends: [LedgerAppend] = []
            var signatures: [SigningDetails] = []
            appends.reserveCapacity(batch.items.count)
            signatures.reserveCapacity(batch.items.count)
            for (index, item) in batch.items.enumerated() {
                let signatureID = try reserved?[index] ?? UUIDv7.generate(unixMilliseconds: milliseconds)
                let claims = SignatureClaims(
                    iss: instance, sub: item.user, jti: signatureID, iat: Int64(milliseconds / 1000),
                    payload: item.payload, payloadLength: item.payloadLength, reason: item.reason,
                    authLevel: item.authLevel, authenticatorType: item.authenticatorType,
                    authenticatorUsed: authenticatorUsed, peer: signaturePeer,
                    batch: BatchClaim(id: batchID, index: index, count: batch.items.count, root: batch.manifest.root)
                )
                let jws = try StepSignSignature.make(claims: claims, key: key, kid: kid)
                appends.append(LedgerAppend(signatureID: signatureID, user: item.user, iat: claims.iat, kid: kid, jws: jws,
                                            peer: ledgerPeer, authLevel: item.authLevel))
                signatures.append(item.details(signature: jws, signatureID: signatureID, authenticatorUsed: authenticatorUsed))
            }
            return (appends, signatures)
        }
        var details = signatures
        let entries: [LedgerEntry]
        do {
            entries = try await ledger.append(all: appends)
        } catch StorageError.signingKeyRevoked(let revoked) {
            if revoked == kid { try? await keyring.refresh() }
            throw StorageError.signingKeyRevoked(revoked)
        }
        for (index, entry) in entries.enumerated() {
            details[index].logIndex = entry.seq - 1
        }
        return (BatchSignatures(batchID: batchID, manifest: batch.manifest, signatures: details), entries)
    }
}
