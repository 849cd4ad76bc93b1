import StepSignCrypto
import StepSignFormat
import StepSignStorage

/// Decides which keys of a shared store a daemon trusts (SPEC §5.4): its own, and other
/// instances' keys whose endorsement chain ends at the cluster root.
///
/// An endorsement counts when it is a valid `stepsign-key-endorsement+jwt` JWS naming the
/// key's kid, public key and instance, signed by the cluster root, or by a trusted,
/// unrevoked key of the same instance (a daemon endorses its own successor as it rotates).
/// An endorsement by a key that is revoked counts for nothing, whenever it was made: the
/// store cannot prove when that was, and whoever stole the revoked key could sign one dated
/// before the revocation (docs/decisions.md, "Key trust").
struct EndorsementChain {
    /// One key as the chain sees it.
    struct Candidate {
        var record: SigningKeyRecord
        var publicKey: P256PublicKey
        var isOwn: Bool
        var isRevoked: Bool
    }

    let candidates: [String: Candidate]
    let root: P256PublicKey?
    private var decided: [String: KeyTrust] = [:]

    init(_ candidates: [Candidate], root: P256PublicKey?) {
        self.candidates = Dictionary(candidates.map { ($0.record.kid, $0) }, uniquingKeysWith: { first, _ in first })
        self.root = root
    }

    /// The trust of every candidate, by kid.
    static func evaluate(_ candidates: [Candidate], root: P256PublicKey?) -> [String: KeyTrust] {
        var chain = EndorsementChain(candidates, root: root)
        for candidate in candidates {
            _ = chain.trust(of: candidate.record.kid, visiting: [])
        }
        return chain.decided
    }

    /// The trust another daemon with the same root gives `kid`, one of this daemon's own keys
    /// (to which no key is its own): `decided`, this daemon's evaluation, is reused for every
    /// key that is not own, so only the own keys on `kid`'s chain are checked again.
    static func trustSeenByOthers(of kid: String, _ candidates: [Candidate], root: P256PublicKey?,
                                  decided: [String: KeyTrust]) -> KeyTrust {
        var chain = EndorsementChain(candidates.map { var other = $0; other.isOwn = false; return other }, root: root)
        chain.decided = decided.filter { $0.value != .own }
        return chain.trust(of: kid, visiting: [])
    }

    private mutating func trust(of kid: String, visiting: Set<String>) -> KeyTrust {
        if let known = decided[kid] { return known }
        let trust = decide(kid, visiting: visiting)
        decided[kid] = trust
        return trust
    }

    private mutating func decide(_ kid: String, visiting: Set<String>) -> KeyTrust {
        guard let candidate = candidates[kid] else { return .untrusted(reason: "no such key") }
        if candidate.isOwn { return .own }
        guard let endorsement = candidate.record.endorsement else {
            return .untrusted(reason: "no endorsement")
        }
        guard let root else {
            return .untrusted(reason: "no cluster root key configured ([cluster] root_key)")
        }
        guard let endorserKid = KeyEndorsement.endorserKid(endorsement) else {
            return .untrusted(reason: "the endorsement is not a JWS")
        }
        let endorserKey: P256PublicKey
        if endorserKid == root.thumbprint {
            endorserKey = root
        } else {
            guard let endorser = candidates[endorserKid] else {
                return .untrusted(reason: "endorsed by an unknown key \(endorserKid)")
            }
            guard endorser.record.instance == candidate.record.instance else {
                return .untrusted(reason: "endorsed by key \(endorserKid) of another instance")
            }
            guard !endorser.isRevoked else {
                return .untrusted(reason: "endorsed by revoked key \(endorserKid); needs the cluster root's endorsement")
            }
            guard !visiting.contains(endorserKid) else { return .untrusted(reason: "endorsement cycle") }
            if let problem = trust(of: endorserKid, visiting: visiting.union([kid])).problem {
                return .untrusted(reason: "endorsed by key \(endorserKid), which is untrusted (\(problem))")
            }
            endorserKey = endorser.publicKey
        }
        let claims: KeyEndorsement
        do {
            claims = try KeyEndorsement.verify(endorsement, endorsers: TrustedKeys(keys: [endorserKey])).endorsement
        } catch {
            return .untrusted(reason: "the endorsement does not verify: \(error.description)")
        }
        guard claims.kid == kid, claims.instance == candidate.record.instance,
              (try? claims.publicKey())?.thumbprint == candidate.publicKey.thumbprint else {
            return .untrusted(reason: "the endorsement names another key or instance")
        }
        return .endorsed(endorser: endorserKid == root.thumbprint ? KeyTrust.rootEndorser : endorserKid)
    }
}
