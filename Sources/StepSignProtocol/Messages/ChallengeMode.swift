/// Challenge modes of SPEC §3.2 (the SDK's `RDNAChallengeOpMode`).
public enum ChallengeMode: Int, Sendable {
    case verify = 0
    case set = 1
    case update = 2
    case updateOnExpiry = 4
    case stepUpForSigning = 12
}
