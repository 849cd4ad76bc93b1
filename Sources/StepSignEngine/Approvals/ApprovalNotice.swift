import struct Foundation.Date
import StepSignCrypto
import StepSignProtocol
import StepSignStorage

/// What the notifier tells an approver when a request waits for them (SPEC §3.4): one JSON
/// line `{"kind":"approvalPending","user","approvalID","requester","reason","payloadSHA256",
/// "expiresAt"}` (an activation code's line has no `kind`). The payload itself is not in it:
/// the approver reads it with `listApprovals` after logging in.
struct ApprovalNotice: NotifierMessage {
    var user: String
    var request: ApprovalRecord

    var jsonLine: [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.member("kind", "approvalPending")
        writer.member("user", user)
        writer.member("approvalID", request.id)
        writer.member("requester", request.requester)
        writer.member("reason", request.reason)
        writer.member("payloadSHA256", Hex.encode(SHA256.hash(Array(request.payload.utf8))))
        writer.member("expiresAt", RFC3339Timestamp.string(request.expiresAt))
        writer.endObject()
        return writer.bytes + [0x0A]
    }
}
