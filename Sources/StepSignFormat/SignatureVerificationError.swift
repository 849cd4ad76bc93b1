/// Why a stepsign signature was not accepted. `isBadInput` separates input that is not a
/// signature at all (exit 2 in `stepsign-verify`) from a well-formed signature that is not
/// valid or does not match (exit 1).
public enum SignatureVerificationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not a compact JWS, or its header is not a JSON object.
    case badInput(String)
    /// `alg` is not ES256 (e.g. `none`, HS256).
    case algorithmNotAllowed(String)
    /// The header has `crit`; stepsign understands no critical extensions.
    case criticalHeaderNotSupported
    /// `typ` is not `stepsign+jwt`.
    case wrongType(String?)
    /// The header has no `kid`.
    case missingKeyID
    /// No trusted key has this `kid`.
    case unknownKeyID(String)
    /// The signature does not verify with the key named by `kid`.
    case badSignature
    /// The signature verifies but is the high-S form (s > n/2); stepsign makes and accepts
    /// only low-S, so that one signature has one string (SPEC §5.3).
    case highS
    /// The header or the claims name a member twice (readers would disagree on its value).
    case duplicateMember(String)
    /// Correctly signed, but the payload is not stepsign's claims JSON.
    case malformedClaims(String)
    /// Valid, but the `payload` claim is not the payload expected.
    case payloadMismatch
    /// Valid, but the `sub` claim is not the user expected.
    case userMismatch
    /// Valid, but made at an authentication level below the one required (`--min-level`).
    case levelTooLow(level: Int, minimum: Int)
    /// Signed by a key revoked at log index `revokedAt` (SPEC §5.4), and no log index below
    /// it is proven for this signature.
    case revokedKey(kid: String, revokedAt: Int64, logIndex: Int64?)
    /// The signature is not proven to be in the log: the proof's checkpoint is not signed by a
    /// trusted log key of its origin, or its path does not lead from this JWS to the root
    /// (SPEC §5.5).
    case notInLog(String)

    /// True for `.badInput`: the text was not a signature at all.
    public var isBadInput: Bool {
        if case .badInput = self { return true }
        return false
    }

    /// A short stable token for machine-readable output, e.g. `"bad-signature"`.
    public var reason: String {
        switch self {
        case .badInput: "bad-input"
        case .algorithmNotAllowed: "alg-not-allowed"
        case .criticalHeaderNotSupported: "crit-not-supported"
        case .wrongType: "wrong-typ"
        case .missingKeyID: "missing-kid"
        case .unknownKeyID: "unknown-kid"
        case .badSignature: "bad-signature"
        case .highS: "high-s"
        case .duplicateMember: "duplicate-member"
        case .malformedClaims: "malformed-claims"
        case .payloadMismatch: "payload-mismatch"
        case .userMismatch: "user-mismatch"
        case .levelTooLow: "level-too-low"
        case .revokedKey: "revoked-key"
        case .notInLog: "not-in-log"
        }
    }

    /// A one-line explanation for logs and CLI output.
    public var description: String {
        switch self {
        case .badInput(let why): "not a signature: \(why)"
        case .algorithmNotAllowed(let alg): "algorithm \(alg) is not allowed (only ES256)"
        case .criticalHeaderNotSupported: "the header has critical extensions (crit)"
        case .wrongType(let typ): "typ is \(typ ?? "missing"), not \(StepSignSignature.headerType)"
        case .missingKeyID: "the header has no kid"
        case .unknownKeyID(let kid): "no trusted key has kid \(kid)"
        case .badSignature: "the signature does not verify"
        case .highS: "the signature is in high-S form (s > n/2); stepsign signatures are low-S"
        case .duplicateMember(let name): "the member \"\(name)\" appears twice"
        case .malformedClaims(let why): "the claims are not stepsign claims: \(why)"
        case .payloadMismatch: "the payload does not match"
        case .userMismatch: "the user does not match"
        case let .levelTooLow(level, minimum):
            "authentication level \(level) is below the minimum \(minimum)\(level == 0 ? " (level 0: nobody was authenticated)" : "")"
        case let .revokedKey(kid, revokedAt, logIndex?):
            "key \(kid) was revoked at log index \(revokedAt); this signature is at index \(logIndex), not below it"
        case let .revokedKey(kid, revokedAt, nil):
            "key \(kid) was revoked at log index \(revokedAt): its signatures are valid only with proof of a log index below it"
        case .notInLog(let why): "the proof does not show this signature in the log: \(why)"
        }
    }
}
