import StepSignCrypto
import StepSignProtocol

/// The operation text of an IDV biometric challenge (SPEC §3.1 `getIDVBiometric.challenge`):
/// what the IDV server shows the person before the biometric check, and what its assertion
/// binds to with `txn` = base64url(SHA-256(text)) (PSD2 "dynamic linking").
///
/// Lines, joined by `\n` with no trailing newline, as the LDA text (``DeviceChallengeText``)
/// with the peer's uid after the pid:
///
///     stepsign-idv-v1
///     <nonce: 128 random bits, base64url>
///     <user>
///     <SHA-256 of the payload's UTF-8 bytes, lowercase hex>
///     <reason>
///     <requesting process name (/proc/PID/comm)>
///     <requesting process pid>
///     <requesting process uid (SO_PEERCRED)>
///
/// The process name is the peer's own choice (`prctl(PR_SET_NAME)`), the uid the kernel's.
/// No field can hold a newline: user IDs and reasons are refused if they would, and in the
/// process name such characters become "?".
///
/// A batch's step-up (SPEC §3.4) binds version `stepsign-idv-v2`: the requester lines around
/// the batch's manifest (count, bytes, root) and its reasons, as ``OperationText`` lays them out.
enum IDVChallengeText {
    static let version = "stepsign-idv-v1"
    static let batchVersion = "stepsign-idv-v2"

    static func bytes(nonce: String, user: String, payload: String, reason: String, peer: Peer) -> [UInt8] {
        OperationText.bytes(version: version, nonce: nonce, user: user, payload: payload, reason: reason, peer: peer)
    }

    static func batchBytes(nonce: String, user: String, manifest: BatchManifest, peer: Peer) -> [UInt8] {
        OperationText.batchBytes(version: batchVersion, nonce: nonce, user: user, manifest: manifest, peer: peer)
    }

    /// The `txn` claim an assertion for `text` must carry: base64url(SHA-256(text)).
    static func txn(of text: [UInt8]) -> String {
        Base64URL.encode(SHA256.hash(text))
    }
}
