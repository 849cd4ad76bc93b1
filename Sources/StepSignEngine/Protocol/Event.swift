import StepSignCrypto

/// A callback the SDK would have raised, carried in a reply's `events` (SPEC §3.1).
public enum Event: Sendable, Equatable {
    case getUser
    case getPassword(user: String, challengeMode: ChallengeMode, attemptsLeft: Int, status: Status, info: [(String, String)])
    case getActivationCode(user: String, verificationKey: String, attemptsLeft: Int, status: Status)
    case getUserConsentForLDA(user: String, challengeMode: ChallengeMode)
    case getLDASignature(user: String, challengeMode: ChallengeMode, challenge: [UInt8], deviceKeys: [String],
                         attemptsLeft: Int, status: Status)
    case getIDVBiometric(user: String, challengeMode: ChallengeMode, nonce: String, challenge: [UInt8], attemptsLeft: Int,
                         status: Status)
    case onUserLoggedIn(user: String, sessionID: String)
    case onUserLoggedOff(user: String)
    case onCredentialsAvailableForUpdate(user: String, options: [String])
    case onUpdateCredentialResponse(user: String, credType: String, status: Status)
    case onAuthenticateUserAndSignData(details: SigningDetails, status: Status)

    public static func == (lhs: Event, rhs: Event) -> Bool { lhs.json == rhs.json }

    /// The event as it goes on the wire.
    public var json: JSONValue {
        switch self {
        case .getUser:
            return ["event": "getUser"]
        case let .getPassword(user, mode, attemptsLeft, status, info):
            return [
                "event": "getPassword",
                "user": .string(user),
                "challengeMode": .int(Int64(mode.rawValue)),
                "attemptsLeft": .int(Int64(attemptsLeft)),
                "status": status.json,
                "info": .object(info.map { ($0.0, .string($0.1)) }),
            ]
        case let .getActivationCode(user, verificationKey, attemptsLeft, status):
            return [
                "event": "getActivationCode",
                "user": .string(user),
                "verificationKey": .string(verificationKey),
                "attemptsLeft": .int(Int64(attemptsLeft)),
                "status": status.json,
            ]
        case let .getUserConsentForLDA(user, mode):
            return ["event": "getUserConsentForLDA", "user": .string(user), "challengeMode": .int(Int64(mode.rawValue))]
        case let .getLDASignature(user, mode, challenge, deviceKeys, attemptsLeft, status):
            return [
                "event": "getLDASignature",
                "user": .string(user),
                "challengeMode": .int(Int64(mode.rawValue)),
                "challenge": .string(Base64URL.encode(challenge)),
                "deviceKeys": .array(deviceKeys.map { .string($0) }),
                "attemptsLeft": .int(Int64(attemptsLeft)),
                "status": status.json,
            ]
        case let .getIDVBiometric(user, mode, nonce, challenge, attemptsLeft, status):
            return [
                "event": "getIDVBiometric",
                "user": .string(user),
                "challengeMode": .int(Int64(mode.rawValue)),
                "nonce": .string(nonce),
                "challenge": .string(Base64URL.encode(challenge)),
                "attemptsLeft": .int(Int64(attemptsLeft)),
                "status": status.json,
            ]
        case let .onCredentialsAvailableForUpdate(user, options):
            return ["event": "onCredentialsAvailableForUpdate", "user": .string(user), "options": .array(options.map { .string($0) })]
        case let .onUpdateCredentialResponse(user, credType, status):
            return ["event": "onUpdateCredentialResponse", "user": .string(user), "credType": .string(credType), "status": status.json]
        case let .onUserLoggedIn(user, sessionID):
            return ["event": "onUserLoggedIn", "user": .string(user), "session": ["id": .string(sessionID)]]
        case let .onUserLoggedOff(user):
            return ["event": "onUserLoggedOff", "user": .string(user)]
        case let .onAuthenticateUserAndSignData(details, status):
            return [
                "event": "onAuthenticateUserAndSignData",
                "details": details.json,
                "status": status.json,
                "error": ["code": 0, "message": "Success"],
            ]
        }
    }
}

/// Challenge modes of SPEC §3.2 (the SDK's `RDNAChallengeOpMode`).
public enum ChallengeMode: Int, Sendable {
    case verify = 0
    case set = 1
    case update = 2
    case updateOnExpiry = 4
    case stepUpForSigning = 12
}
