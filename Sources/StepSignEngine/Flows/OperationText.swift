import StepSignCrypto
import StepSignProtocol

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
/// A batch's text (SPEC §3.4) names its manifest instead of one payload, with the requester
/// in the same fixed lines and the distinct reasons last, one a line, so no line's meaning
/// depends on how many reasons there are:
///
///     <version>
///     <nonce>
///     <user>
///     <number of items>
///     <their UTF-8 bytes, all together>
///     <manifest root, standard base64>
///     <requesting process name>
///     <requesting process pid>
///     <requesting process uid>
///     <reason>            (each distinct reason, in the order it first appears)
///
/// A process may name itself anything, control characters included: those are shown as "?".
enum OperationText {
    static func bytes(version: String, nonce: String, user: String, payload: String, reason: String, peer: Peer) -> [UInt8] {
        let payloadHash = Hex.encode(SHA256.hash(Array(payload.utf8)))
        let lines = [version, nonce, user, payloadHash, reason, shown(peer.comm), String(peer.pid), String(peer.uid)]
        return Array(lines.joined(separator: "\n").utf8)
    }

    static func batchBytes(version: String, nonce: String, user: String, manifest: BatchManifest, peer: Peer) -> [UInt8] {
        let lines = [version, nonce, user, String(manifest.count), String(manifest.bytes), manifest.root,
                     shown(peer.comm), String(peer.pid), String(peer.uid)] + manifest.reasons
        return Array(lines.joined(separator: "\n").utf8)
    }

    /// A process name as a text line: its hidden characters as "?".
    static func shown(_ comm: String) -> String {
        String(String.UnicodeScalarView(comm.unicodeScalars.map { SigningRequest.isHidden($0) ? "?" : $0 }))
    }
}
