import StepSignCrypto
import StepSignProtocol

/// The text an LDA device signs (SPEC §3.2): it binds the operation so that a device signs
/// exactly what it shows, and the user sees who is asking.
///
/// Lines, joined by `\n` with no trailing newline:
///
///     stepsign-lda-v2
///     <nonce: 128 random bits, base64url>
///     <user>
///     <SHA-256 of the payload's UTF-8 bytes, lowercase hex>
///     <reason>
///     <requesting process name (/proc/PID/comm)>
///     <requesting process pid>
///     <requesting process uid (SO_PEERCRED)>
///
/// Version 2 added the uid (SPEC §3.2): the process name is the peer's own choice
/// (`prctl(PR_SET_NAME)`), the uid is the kernel's, so the user sees who really asks.
/// No field may contain a newline or a character that changes how the text displays: user IDs
/// cannot, reasons are refused if they do, and in the process name such characters become "?". For the login of forgot-password Path A the
/// payload is the fixed text `stepsign-login` and the reason `Log in with a device key`.
///
/// A batch's step-up (SPEC §3.4) signs version `stepsign-lda-v3`: the same requester lines
/// around the batch's manifest (count, bytes, root) and its reasons (``OperationText``).
enum DeviceChallengeText {
    static let version = "stepsign-lda-v2"
    static let batchVersion = "stepsign-lda-v3"
    static let loginPayload = "stepsign-login"
    static let loginReason = "Log in with a device key"

    static func bytes(nonce: String, user: String, payload: String, reason: String, peer: Peer) -> [UInt8] {
        OperationText.bytes(version: version, nonce: nonce, user: user, payload: payload, reason: reason, peer: peer)
    }

    /// What the device signs to log `user` in (forgot password, Path A).
    static func loginSubject(user: String) -> StepUpSubject {
        StepUpSubject(user: user, operation: .payload(loginPayload, reason: loginReason))
    }

    static func batchBytes(nonce: String, user: String, manifest: BatchManifest, peer: Peer) -> [UInt8] {
        OperationText.batchBytes(version: batchVersion, nonce: nonce, user: user, manifest: manifest, peer: peer)
    }
}
