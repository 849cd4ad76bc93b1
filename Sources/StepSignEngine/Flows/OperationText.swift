import StepSignCrypto

/// The text a device (LDA) or the IDV server shows the user and signs or binds: one field per
/// line, after a version line, so that what is approved is exactly one operation by one
/// requester (SPEC §3.2):
///
///     <version>
///     <nonce>
///     <user>
///     <SHA-256 of the payload, lowercase hex>
///     <reason>
///     <requesting process name (/proc/PID/comm)>
///     <requesting process pid>
///     <requesting process uid (SO_PEERCRED)>
///
/// A process may name itself anything, control characters included: those are shown as "?".
enum OperationText {
    static func bytes(version: String, nonce: String, user: String, payload: String, reason: String, peer: Peer) -> [UInt8] {
        let payloadHash = Hex.encode(SHA256.hash(Array(payload.utf8)))
        let comm = String(String.UnicodeScalarView(peer.comm.unicodeScalars.map { SigningRequest.isHidden($0) ? "?" : $0 }))
        let lines = [version, nonce, user, payloadHash, reason, comm, String(peer.pid), String(peer.uid)]
        return Array(lines.joined(separator: "\n").utf8)
    }
}
