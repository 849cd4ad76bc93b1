import StepSignCrypto
import StepSignProtocol
import StepSignFormat
import StepSignStorage
import struct Foundation.Date

/// Makes a signature and records it: JWS with the active key, then the durable ledger row.
struct Signer: Sendable {
    let keyring: Keyring
    let ledger: LedgerWriter

    /// Signs `request` for its user at `now` (the request's time: `iat` and the time in the
    /// UUIDv7 signature ID) and returns the reply details once the row is committed.
    func sign(_ request: SigningRequest, instance: String, authenticatorUsed: String, peer: Peer,
              now: Date, reusedFrom: String? = nil) async throws -> (SigningDetails, LedgerEntry) {
        let (kid, key) = keyring.signer
        let milliseconds = UInt64(max(0, now.timeIntervalSince1970 * 1000))
        let signatureID = try UUIDv7.generate(unixMilliseconds: milliseconds)
        let claims = SignatureClaims(
            iss: instance, sub: request.user, jti: signatureID, iat: Int64(milliseconds / 1000),
            payload: request.payload, payloadLength: request.payloadLength, reason: request.reason,
            authLevel: request.authLevel, authenticatorType: request.authenticatorType,
            authenticatorUsed: authenticatorUsed,
            peer: SignaturePeer(uid: peer.uid, pid: peer.pid, comm: peer.comm),
            stepUp: reusedFrom.map { StepUpClaim(reusedFrom: $0) }
        )
        let jws = try StepSignSignature.make(claims: claims, key: key, kid: kid)
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
}
