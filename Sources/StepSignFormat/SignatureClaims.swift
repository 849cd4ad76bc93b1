import StepSignProtocol

/// The claims of a stepsign signature (SPEC §2), the JWS payload.
public struct SignatureClaims: Codable, Sendable, Equatable {
    /// The daemon instance name (`instance` in the config).
    public var iss: String
    /// The user ID.
    public var sub: String
    /// The signature ID (UUIDv7).
    public var jti: String
    /// When it was signed, Unix seconds.
    public var iat: Int64
    /// The signed payload text.
    public var payload: String
    /// The payload's length in characters (extended grapheme clusters).
    public var payloadLength: Int
    /// Why it was signed, as the caller gave it.
    public var reason: String
    /// The authentication level requested.
    public var authLevel: Int
    /// The authenticator type requested.
    public var authenticatorType: Int
    /// What authenticated the user: `none`, `password`, `lda` or `idv-biometric`.
    public var authenticatorUsed: String
    /// Who asked: `{uid, pid, comm}`. Nil only in signatures made before the claim existed
    /// (see docs/decisions.md: such ledger entries are accepted, their peer columns unsigned).
    public var peer: SignaturePeer?
    /// The step-up this signature reused (SPEC §3.4); nil when it stepped up itself, or needed none.
    public var stepUp: StepUpClaim?
    /// The batch this signature is one item of (SPEC §3.4); nil for a signature of one payload.
    public var batch: BatchClaim?
    /// The approvals it waited for (SPEC §3.4); nil when no `[[approval]]` rule matched.
    public var approvals: [ApprovalClaim]?
    /// The SSHSIG data an agent signature signed (SPEC §3.5); nil for every other signature.
    public var ssh: SSHClaim?

    /// Claims with the given values.
    public init(iss: String, sub: String, jti: String, iat: Int64, payload: String, payloadLength: Int,
                reason: String, authLevel: Int, authenticatorType: Int, authenticatorUsed: String,
                peer: SignaturePeer? = nil, stepUp: StepUpClaim? = nil, batch: BatchClaim? = nil,
                approvals: [ApprovalClaim]? = nil, ssh: SSHClaim? = nil) {
        self.iss = iss
        self.sub = sub
        self.jti = jti
        self.iat = iat
        self.payload = payload
        self.payloadLength = payloadLength
        self.reason = reason
        self.authLevel = authLevel
        self.authenticatorType = authenticatorType
        self.authenticatorUsed = authenticatorUsed
        self.peer = peer
        self.stepUp = stepUp
        self.batch = batch
        self.approvals = approvals
        self.ssh = ssh
    }

    /// The claims as compact JSON, members in declaration order, written by hand (no
    /// `JSONEncoder`) because this runs for every signature.
    public var jsonBytes: [UInt8] {
        var writer = JSONWriter(capacity: 256 + (batch == nil ? 0 : 128) + (peer?.comm.utf8.count ?? 0) + payload.utf8.count + reason.utf8.count + sub.utf8.count + iss.utf8.count)
        writer.beginObject()
        writer.member("iss", iss)
        writer.member("sub", sub)
        writer.member("jti", jti)
        writer.member("iat", iat)
        writer.member("payload", payload)
        writer.member("payloadLength", payloadLength)
        writer.member("reason", reason)
        writer.member("authLevel", authLevel)
        writer.member("authenticatorType", authenticatorType)
        writer.member("authenticatorUsed", authenticatorUsed)
        peer?.write(into: &writer)
        stepUp?.write(into: &writer)
        batch?.write(into: &writer)
        if let approvals {
            writer.key("approvals")
            writer.beginArray()
            for approval in approvals { approval.write(into: &writer) }
            writer.endArray()
        }
        ssh?.write(into: &writer)
        writer.endObject()
        return writer.bytes
    }
}
