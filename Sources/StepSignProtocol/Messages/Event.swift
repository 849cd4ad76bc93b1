/// A callback the SDK would have raised, carried in a reply's `events` (SPEC §3.1).
public enum Event: Sendable, Equatable {
    case getUser
    /// `manifest`: what a batch's step-up approves (SPEC §3.4); nil for everything else.
    case getPassword(user: String, challengeMode: ChallengeMode, attemptsLeft: Int, status: Status, info: [(String, String)],
                     manifest: BatchManifest? = nil)
    case getActivationCode(user: String, verificationKey: String, attemptsLeft: Int, status: Status)
    case getUserConsentForLDA(user: String, challengeMode: ChallengeMode)
    /// `challenge` is base64url without padding, as it goes on the wire.
    case getLDASignature(user: String, challengeMode: ChallengeMode, challenge: String, deviceKeys: [String],
                         attemptsLeft: Int, status: Status, manifest: BatchManifest? = nil)
    /// `challenge` is base64url without padding, as it goes on the wire.
    case getIDVBiometric(user: String, challengeMode: ChallengeMode, nonce: String, challenge: String, attemptsLeft: Int,
                         status: Status, manifest: BatchManifest? = nil)
    case onUserLoggedIn(user: String, sessionID: String)
    case onUserLoggedOff(user: String)
    case onCredentialsAvailableForUpdate(user: String, options: [String])
    case onUpdateCredentialResponse(user: String, credType: String, status: Status)
    case onAuthenticateUserAndSignData(details: SigningDetails, status: Status)
    /// The outcome of a batch (SPEC §3.4).
    case onAuthenticateUserAndSignBatch(batch: BatchSignatures, status: Status)
    /// A request that waits for approval by several people (SPEC §3.4); nothing is signed yet.
    /// `expiresAt` is RFC 3339.
    case onApprovalPending(approvalID: String, required: Int, approvers: [String], expiresAt: String)
    /// An approver's answer to a request was taken (or refused with `status`): the request's
    /// `state` and how many approvals it has.
    case onApprovalResponse(approvalID: String, decision: String, state: String, approvals: Int, required: Int, status: Status)

    public static func == (lhs: Event, rhs: Event) -> Bool { lhs.jsonBytes == rhs.jsonBytes }

    /// The event's name on the wire (its `event` member).
    public var name: String {
        switch self {
        case .getUser: "getUser"
        case .getPassword: "getPassword"
        case .getActivationCode: "getActivationCode"
        case .getUserConsentForLDA: "getUserConsentForLDA"
        case .getLDASignature: "getLDASignature"
        case .getIDVBiometric: "getIDVBiometric"
        case .onUserLoggedIn: "onUserLoggedIn"
        case .onUserLoggedOff: "onUserLoggedOff"
        case .onCredentialsAvailableForUpdate: "onCredentialsAvailableForUpdate"
        case .onUpdateCredentialResponse: "onUpdateCredentialResponse"
        case .onAuthenticateUserAndSignData: "onAuthenticateUserAndSignData"
        case .onAuthenticateUserAndSignBatch: "onAuthenticateUserAndSignBatch"
        case .onApprovalPending: "onApprovalPending"
        case .onApprovalResponse: "onApprovalResponse"
        }
    }

    /// Writes the event as it goes on the wire: an object whose first member is `event`.
    public func write<Output>(to writer: inout JSONWriter<Output>) {
        writer.beginObject()
        switch self {
        case .getUser:
            writer.member("event", "getUser")
        case let .getPassword(user, mode, attemptsLeft, status, info, manifest):
            writer.member("event", "getPassword")
            writer.member("user", user)
            writer.member("challengeMode", mode.rawValue)
            writer.member("attemptsLeft", attemptsLeft)
            status.write(as: "status", to: &writer)
            writer.member("info", .object(info.map { ($0.0, .string($0.1)) }))
            manifest?.write(as: "manifest", to: &writer)
        case let .getActivationCode(user, verificationKey, attemptsLeft, status):
            writer.member("event", "getActivationCode")
            writer.member("user", user)
            writer.member("verificationKey", verificationKey)
            writer.member("attemptsLeft", attemptsLeft)
            status.write(as: "status", to: &writer)
        case let .getUserConsentForLDA(user, mode):
            writer.member("event", "getUserConsentForLDA")
            writer.member("user", user)
            writer.member("challengeMode", mode.rawValue)
        case let .getLDASignature(user, mode, challenge, deviceKeys, attemptsLeft, status, manifest):
            writer.member("event", "getLDASignature")
            writer.member("user", user)
            writer.member("challengeMode", mode.rawValue)
            writer.member("challenge", challenge)
            writer.member("deviceKeys", .array(deviceKeys.map { .string($0) }))
            writer.member("attemptsLeft", attemptsLeft)
            status.write(as: "status", to: &writer)
            manifest?.write(as: "manifest", to: &writer)
        case let .getIDVBiometric(user, mode, nonce, challenge, attemptsLeft, status, manifest):
            writer.member("event", "getIDVBiometric")
            writer.member("user", user)
            writer.member("challengeMode", mode.rawValue)
            writer.member("nonce", nonce)
            writer.member("challenge", challenge)
            writer.member("attemptsLeft", attemptsLeft)
            status.write(as: "status", to: &writer)
            manifest?.write(as: "manifest", to: &writer)
        case let .onCredentialsAvailableForUpdate(user, options):
            writer.member("event", "onCredentialsAvailableForUpdate")
            writer.member("user", user)
            writer.member("options", .array(options.map { .string($0) }))
        case let .onUpdateCredentialResponse(user, credType, status):
            writer.member("event", "onUpdateCredentialResponse")
            writer.member("user", user)
            writer.member("credType", credType)
            status.write(as: "status", to: &writer)
        case let .onUserLoggedIn(user, sessionID):
            writer.member("event", "onUserLoggedIn")
            writer.member("user", user)
            writer.key("session")
            writer.beginObject()
            writer.member("id", sessionID)
            writer.endObject()
        case let .onUserLoggedOff(user):
            writer.member("event", "onUserLoggedOff")
            writer.member("user", user)
        case let .onAuthenticateUserAndSignData(details, status):
            writer.member("event", "onAuthenticateUserAndSignData")
            details.write(as: "details", to: &writer)
            status.write(as: "status", to: &writer)
            writer.key("error")
            writer.beginObject()
            writer.member("code", 0)
            writer.member("message", "Success")
            writer.endObject()
        case let .onAuthenticateUserAndSignBatch(batch, status):
            writer.member("event", "onAuthenticateUserAndSignBatch")
            writer.member("batchID", batch.batchID)
            batch.manifest.write(as: "manifest", to: &writer)
            writer.key("signatures")
            writer.beginArray()
            for details in batch.signatures {
                details.write(to: &writer)
            }
            writer.endArray()
            if batch.replayed { writer.member("replayed", true) }
            status.write(as: "status", to: &writer)
        case let .onApprovalPending(approvalID, required, approvers, expiresAt):
            writer.member("event", "onApprovalPending")
            writer.member("approvalID", approvalID)
            writer.member("required", required)
            writer.member("approvers", .array(approvers.map { .string($0) }))
            writer.member("expiresAt", expiresAt)
        case let .onApprovalResponse(approvalID, decision, state, approvals, required, status):
            writer.member("event", "onApprovalResponse")
            writer.member("approvalID", approvalID)
            writer.member("decision", decision)
            writer.member("state", state)
            writer.member("approvals", approvals)
            writer.member("required", required)
            status.write(as: "status", to: &writer)
        }
        writer.endObject()
    }

    /// The event's compact JSON.
    public var jsonBytes: [UInt8] {
        var writer = JSONWriter(capacity: 512)
        write(to: &writer)
        return writer.bytes
    }

    /// The event as a JSON value (for tests and tools; the server writes ``write(to:)``).
    public var json: JSONValue {
        (try? JSONParser.parse(jsonBytes)) ?? .null
    }
}
