import StepSignCrypto
import StepSignProtocol
import StepSignStorage

/// An approver's answer to a request that waits for approval by several people (SPEC §3.4),
/// waiting for the approver's step-up, whose challenge names the request's digest.
struct ApprovalDecision: Sendable {
    enum Kind: Sendable, Equatable {
        case approve
        case deny(reason: String)
    }

    var approver: String
    var kind: Kind
    /// The request as it was read when the approver asked.
    var request: ApprovalRecord

    /// `approve` or `deny`, as the texts and replies name it.
    var name: String {
        if case .approve = kind { return "approve" }
        return "deny"
    }

    /// What the step-up approves: this answer to this request.
    var subject: StepUpSubject { StepUpSubject(user: approver, operation: .approval(self)) }

    /// The text the approver's device signs (`stepsign-lda-approval-v1`) or the IDV server
    /// binds (`stepsign-idv-approval-v1`): one field a line, the request's digest and what it
    /// is made of, so the approver sees what they approve and whom for, and an answer to one
    /// request can never count for another:
    ///
    ///     <version>
    ///     <nonce>
    ///     <approver>
    ///     approve | deny
    ///     <approval ID>
    ///     <request digest, lowercase hex>
    ///     <requester>
    ///     <SHA-256 of the payload, lowercase hex>
    ///     <reason>
    ///     <requesting process name>
    ///     <requesting process pid>
    ///     <requesting process uid>
    ///     <the denial's reason>      (deny only)
    func text(version: String, nonce: String) -> [UInt8] {
        var lines = [version, nonce, approver, name, request.id, Hex.encode(Self.digest(of: request)), request.requester,
                     Hex.encode(SHA256.hash(Array(request.payload.utf8))), request.reason,
                     OperationText.shown(request.peer.comm),
                     String(request.peer.pid), String(request.peer.uid)]
        if case let .deny(reason) = kind { lines.append(reason) }
        return Array(lines.joined(separator: "\n").utf8)
    }

    static let deviceVersion = "stepsign-lda-approval-v1"
    static let idvVersion = "stepsign-idv-approval-v1"

    /// The request's digest: SHA-256 over its ID, requester, payload, reason, level, type and
    /// requesting process, one a line after `stepsign-approval-request-v1`.
    static func digest(of request: ApprovalRecord) -> [UInt8] {
        let lines = ["stepsign-approval-request-v1", request.id, request.requester, Hex.encode(SHA256.hash(Array(request.payload.utf8))),
                     request.reason, String(request.authLevel), String(request.authenticatorType), request.peer.comm,
                     String(request.peer.pid), String(request.peer.uid)]
        return SHA256.hash(Array(lines.joined(separator: "\n").utf8))
    }
}
