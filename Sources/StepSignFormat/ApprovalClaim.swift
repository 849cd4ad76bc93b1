import StepSignProtocol

/// One approval in the `approvals` claim of a signature that needed approval by several people
/// (SPEC §3.4): who approved, with which step-up, when.
public struct ApprovalClaim: Codable, Sendable, Equatable {
    /// The approver's user ID.
    public var user: String
    /// The level of the approver's step-up.
    public var authLevel: Int
    /// What authenticated the approver: `password`, `lda` or `idv-biometric`.
    public var authenticator: String
    /// When, Unix seconds.
    public var at: Int64

    public init(user: String, authLevel: Int, authenticator: String, at: Int64) {
        self.user = user
        self.authLevel = authLevel
        self.authenticator = authenticator
        self.at = at
    }

    func write<Output>(into writer: inout JSONWriter<Output>) {
        writer.beginObject()
        writer.member("user", user)
        writer.member("authLevel", authLevel)
        writer.member("authenticator", authenticator)
        writer.member("at", at)
        writer.endObject()
    }
}
