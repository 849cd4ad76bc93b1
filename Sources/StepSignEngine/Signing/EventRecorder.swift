#if canImport(Glibc)
import Glibc
#endif
import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import StepSignStorage
import struct Foundation.Date

/// Records every change of who may sign as a signed ledger entry (SPEC §5.4): a
/// `stepsign-event+jwt` JWS by the active key, appended through the same group-committing
/// ledger writer as the signatures, durable before the change is acknowledged.
struct EventRecorder: Sendable {
    let keyring: Keyring
    let ledger: LedgerWriter
    /// Told of every event that names a user, once it is durable (the user's step-up reuse
    /// windows end, SPEC §3.4).
    var onUserEvent: @Sendable (String) -> Void = { _ in }

    /// The daemon itself, as the peer of the events it records on its own (its start, a key
    /// made because another daemon revoked its own).
    static var daemon: Peer {
        Peer(uid: geteuid(), gid: getegid(), pid: getpid(), comm: "stepsignd", groups: [])
    }

    /// Appends one event and returns its ledger entry (its log index is `seq - 1`).
    @discardableResult
    func record(_ kind: LedgerEvent.Kind, user: String? = nil, details: [(String, JSONValue)] = [], peer: Peer,
                instance: String, now: Date) async throws -> LedgerEntry {
        let row = try signed(kind, user: user, details: details, peer: peer, instance: instance, now: now)
        let entry = try await ledger.append(row)
        if let user { onUserEvent(user) }
        return entry
    }

    /// Appends `admin.recover`'s `logEpochStarted` event although the log is refused (SPEC
    /// §5.5): ``LedgerWriter/appendPastRefusal(_:)``.
    func recordEpochStart(details: [(String, JSONValue)], peer: Peer, instance: String, now: Date) async throws -> LedgerEntry {
        let row = try signed(.logEpochStarted, details: details, peer: peer, instance: instance, now: now)
        return try await ledger.appendPastRefusal(row)
    }

    /// The ledger row of one event, signed by the active key.
    private func signed(_ kind: LedgerEvent.Kind, user: String? = nil, details: [(String, JSONValue)], peer: Peer,
                        instance: String, now: Date) throws -> LedgerAppend {
        let (kid, key) = keyring.signer
        let jti = try UUIDv7.generate(unixMilliseconds: UInt64(max(0, now.timeIntervalSince1970 * 1000)))
        let signedPeer = SignaturePeer(uid: peer.uid, pid: peer.pid, comm: peer.comm)
        let event = LedgerEvent(iss: instance, jti: jti, kind: kind, user: user, peer: signedPeer,
                                iat: Int64(now.timeIntervalSince1970), details: details)
        let jws = try event.signed(key: key, kid: kid)
        return LedgerAppend(signatureID: jti, user: user ?? "", iat: event.iat, kid: kid, jws: jws,
                            peer: LedgerPeer(uid: peer.uid, pid: peer.pid, comm: peer.comm),
                            authLevel: LedgerAppend.eventAuthLevel, approvalID: event.detail("approvalID"))
    }

    /// Records a `signingKeyCreated` event for each key the keyring made on its own since
    /// the last call.
    func recordCreatedKeys(peer: Peer, instance: String, now: Date) async throws {
        for kid in keyring.takeCreatedKeys() {
            try await record(.signingKeyCreated, details: [("kid", .string(kid)), ("instance", .string(instance))],
                             peer: peer, instance: instance, now: now)
        }
    }
}
