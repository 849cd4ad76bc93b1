/// One operation of SPEC §3.2 with its parameters, decoded once: every parameter has its type
/// and range, and a member the operation does not take is refused (code 4), so a misspelt
/// parameter is an error and not silently ignored.
public enum Operation: Sendable {
    case authenticateUserAndSignData(SignDataParameters)
    /// Several payloads behind one step-up (SPEC §3.4).
    case authenticateUserAndSignBatch(SignBatchParameters)
    case setUser(user: String)
    case setPassword(password: String, challengeMode: Int)
    case updatePassword(currentPassword: String, newPassword: String, challengeMode: Int)
    case getAllChallenges
    case initiateUpdateFlowForCredential(credentialType: String)
    case forgotPassword(user: String)
    case resendActivationCode
    case setActivationCode(activationCode: String)
    case setUserConsentForLDA(consent: Bool)
    case setLDASignature(deviceKeyID: String, signature: String, authenticatorData: String? = nil)
    case setIDVBiometricAssertion(assertion: String)
    /// `publicKey` is checked as a JWK by the engine (nil when absent).
    case enrollDeviceKey(publicKey: JSONValue?, label: String?, fido2: JSONValue? = nil)
    case logOff
    case resetAuthState
    case resetAuthenticateUserAndSignDataState
    case getPublicKeys(format: String?)
    case getSignature(signatureID: String)
    case getCheckpoint
    /// The inclusion proof of a signature in the transparency log (SPEC §5.5), in the tree of
    /// `treeSize` entries (nil: the whole log).
    case getInclusionProof(signatureID: String, treeSize: Int?)
    /// The consistency proof from the tree of `fromSize` entries to that of `toSize` (nil: the
    /// whole log).
    case getConsistencyProof(fromSize: Int, toSize: Int?)
    /// The tlog-proof of a signature once a checkpoint covering it carries `quorum` valid
    /// witness cosignatures (nil: every `[[witness]]`), waiting up to `timeoutSeconds` (SPEC §5.6).
    case waitForProof(signatureID: String, quorum: Int?, timeoutSeconds: Int)
    case status
    /// Approval by several people (SPEC §3.4): the open requests this session's user may
    /// approve; approving or denying one (after a step-up); a request's state, waiting up to
    /// `waitSeconds` for it to leave `pending`.
    case listApprovals
    case approveRequest(approvalID: String)
    case denyRequest(approvalID: String, reason: String)
    case getApproval(approvalID: String, waitSeconds: Int)
    /// `unlockAgent` (SPEC §3.5): a step-up that opens the peer uid's SSH agent window.
    case unlockAgent(UnlockAgentParameters)
    /// `lockAgent` (SPEC §3.5): ends the peer uid's SSH agent window.
    case lockAgent
    /// An `admin.*` operation; only admin peers may send one.
    case admin(AdminOperation)

    /// Whether `op` names an admin operation: the engine refuses it (13) to other peers before
    /// its parameters are read.
    public static func isAdmin(_ op: String) -> Bool { op.hasPrefix("admin.") }

    /// The operations that answer an open challenge (an expired challenge makes them error 11).
    public static let challengeAnswers: Set<String> = [
        "setPassword", "updatePassword", "setActivationCode", "resendActivationCode", "setLDASignature",
        "setIDVBiometricAssertion", "setUserConsentForLDA",
    ]

    /// Decodes the operation and parameters of `request`.
    public init(_ request: Request) throws(StepSignError) {
        switch request.op {
        case "authenticateUserAndSignData":
            try request.allowOnly(["payload", "reason", "authLevel", "authenticatorType", "user", "idempotencyKey"])
            self = .authenticateUserAndSignData(SignDataParameters(
                payload: try request.string("payload"),
                reason: try request.string("reason"),
                authLevel: try request.int("authLevel", in: 0...100),
                authenticatorType: try request.int("authenticatorType", in: 0...100),
                user: try request.optionalString("user"),
                idempotencyKey: try request.optionalString("idempotencyKey")))
        case "authenticateUserAndSignBatch":
            try request.allowOnly(["items", "authLevel", "authenticatorType", "user", "idempotencyKey"])
            self = .authenticateUserAndSignBatch(SignBatchParameters(
                items: try SignBatchParameters.items(request.member("items")),
                authLevel: try request.int("authLevel", in: 0...100),
                authenticatorType: try request.int("authenticatorType", in: 0...100),
                user: try request.optionalString("user"),
                idempotencyKey: try request.optionalString("idempotencyKey")))
        case "setUser":
            try request.allowOnly(["user"])
            self = .setUser(user: try request.string("user"))
        case "setPassword":
            try request.allowOnly(["password", "challengeMode"])
            self = .setPassword(password: try request.string("password"),
                                challengeMode: try request.int("challengeMode", in: 0...100))
        case "updatePassword":
            try request.allowOnly(["currentPassword", "newPassword", "challengeMode"])
            self = .updatePassword(currentPassword: try request.string("currentPassword"),
                                   newPassword: try request.string("newPassword"),
                                   challengeMode: try request.int("challengeMode", in: 0...100))
        case "getAllChallenges":
            try request.allowOnly([])
            self = .getAllChallenges
        case "initiateUpdateFlowForCredential":
            try request.allowOnly(["credentialType"])
            self = .initiateUpdateFlowForCredential(credentialType: try request.string("credentialType"))
        case "forgotPassword":
            try request.allowOnly(["user"])
            self = .forgotPassword(user: try request.string("user"))
        case "resendActivationCode":
            try request.allowOnly([])
            self = .resendActivationCode
        case "setActivationCode":
            try request.allowOnly(["activationCode"])
            self = .setActivationCode(activationCode: try request.string("activationCode"))
        case "setUserConsentForLDA":
            try request.allowOnly(["consent"])
            guard let consent = try request.optionalBool("consent") else { throw .invalid("missing parameter \"consent\"") }
            self = .setUserConsentForLDA(consent: consent)
        case "setLDASignature":
            try request.allowOnly(["deviceKeyId", "signature", "authenticatorData"])
            self = .setLDASignature(deviceKeyID: try request.string("deviceKeyId"), signature: try request.string("signature"),
                                    authenticatorData: try request.optionalString("authenticatorData"))
        case "setIDVBiometricAssertion":
            try request.allowOnly(["assertion"])
            self = .setIDVBiometricAssertion(assertion: try request.string("assertion"))
        case "enrollDeviceKey":
            try request.allowOnly(["publicKey", "label", "fido2"])
            self = .enrollDeviceKey(publicKey: request.member("publicKey"), label: try request.optionalString("label"),
                                    fido2: request.member("fido2"))
        case "logOff":
            try request.allowOnly([])
            self = .logOff
        case "resetAuthState":
            try request.allowOnly([])
            self = .resetAuthState
        case "resetAuthenticateUserAndSignDataState":
            try request.allowOnly([])
            self = .resetAuthenticateUserAndSignDataState
        case "getPublicKeys":
            try request.allowOnly(["format"])
            self = .getPublicKeys(format: try request.optionalString("format"))
        case "getSignature":
            try request.allowOnly(["signatureID"])
            self = .getSignature(signatureID: try request.string("signatureID"))
        case "getCheckpoint":
            try request.allowOnly([])
            self = .getCheckpoint
        case "getInclusionProof":
            try request.allowOnly(["signatureID", "treeSize"])
            self = .getInclusionProof(signatureID: try request.string("signatureID"),
                                      treeSize: try request.optionalInt("treeSize", in: 1...Int(Int64.max)))
        case "getConsistencyProof":
            try request.allowOnly(["fromSize", "toSize"])
            self = .getConsistencyProof(fromSize: try request.int("fromSize", in: 0...Int(Int64.max)),
                                        toSize: try request.optionalInt("toSize", in: 0...Int(Int64.max)))
        case "waitForProof":
            try request.allowOnly(["signatureID", "quorum", "timeoutSeconds"])
            self = .waitForProof(signatureID: try request.string("signatureID"),
                                 quorum: try request.optionalInt("quorum", in: 1...64),
                                 timeoutSeconds: try request.optionalInt("timeoutSeconds", in: 0...300) ?? 60)
        case "status":
            try request.allowOnly([])
            self = .status
        case "listApprovals":
            try request.allowOnly([])
            self = .listApprovals
        case "approveRequest":
            try request.allowOnly(["approvalID"])
            self = .approveRequest(approvalID: try request.string("approvalID"))
        case "denyRequest":
            try request.allowOnly(["approvalID", "reason"])
            self = .denyRequest(approvalID: try request.string("approvalID"), reason: try request.string("reason"))
        case "getApproval":
            try request.allowOnly(["approvalID", "waitSeconds"])
            self = .getApproval(approvalID: try request.string("approvalID"),
                                waitSeconds: try request.optionalInt("waitSeconds", in: 0...300) ?? 0)
        case "unlockAgent":
            try request.allowOnly(["user", "authLevel", "authenticatorType", "seconds"])
            self = .unlockAgent(UnlockAgentParameters(
                user: try request.optionalString("user"),
                authLevel: try request.int("authLevel", in: 0...100),
                authenticatorType: try request.optionalInt("authenticatorType", in: 0...100) ?? 0,
                seconds: try request.optionalInt("seconds", in: 1...86400)))
        case "lockAgent":
            try request.allowOnly([])
            self = .lockAgent
        default:
            guard Self.isAdmin(request.op) else { throw .invalid("unknown operation \"\(request.op)\"") }
            self = .admin(try AdminOperation(request))
        }
    }
}

/// The parameters of `authenticateUserAndSignData` (SPEC §3.2).
public struct SignDataParameters: Sendable {
    public var payload: String
    public var reason: String
    public var authLevel: Int
    public var authenticatorType: Int
    /// The user to sign for when the session is not logged in; absent or the login's user when it is.
    public var user: String?
    /// The caller's key for retries (SPEC §3, "Idempotent retries"); checked by the engine.
    public var idempotencyKey: String?

    public init(payload: String, reason: String, authLevel: Int, authenticatorType: Int, user: String?,
                idempotencyKey: String? = nil) {
        self.payload = payload
        self.reason = reason
        self.authLevel = authLevel
        self.authenticatorType = authenticatorType
        self.user = user
        self.idempotencyKey = idempotencyKey
    }
}

/// The parameters of `unlockAgent` (SPEC §3.5).
public struct UnlockAgentParameters: Sendable {
    /// The user the agent signs as, when the session is not logged in; absent or the login's
    /// user when it is.
    public var user: String?
    public var authLevel: Int
    /// Default 0.
    public var authenticatorType: Int
    /// How long the window stays open; absent: `[ssh_agent] unlock_seconds`.
    public var seconds: Int?

    public init(user: String?, authLevel: Int, authenticatorType: Int = 0, seconds: Int? = nil) {
        self.user = user
        self.authLevel = authLevel
        self.authenticatorType = authenticatorType
        self.seconds = seconds
    }
}
