import Foundation
@testable import StepSignEngine
import StepSignCrypto
import StepSignFormat
import StepSignStorage
import Testing

/// SPEC §5.4: another instance's key is trusted only through endorsements that end at the
/// cluster root; every way a database writer could fake one fails.
@Suite struct EndorsementChainTests {
    let root: P256PrivateKey
    let first: P256PrivateKey
    let second: P256PrivateKey

    init() throws {
        root = try P256PrivateKey.generate()
        first = try P256PrivateKey.generate()
        second = try P256PrivateKey.generate()
    }

    func candidate(_ key: P256PrivateKey, instance: String = "host-b", endorsement: String?, own: Bool = false,
                   revoked: Bool = false) -> EndorsementChain.Candidate {
        .init(record: SigningKeyRecord(kid: key.publicKey.thumbprint, createdAt: Date(), active: false,
                                       instance: instance, publicKeyPEM: key.publicKey.spkiPEM, endorsement: endorsement),
              publicKey: key.publicKey, isOwn: own, isRevoked: revoked)
    }

    func endorse(_ key: P256PrivateKey, by endorser: P256PrivateKey, instance: String = "host-b") throws -> String {
        try KeyEndorsement(instance: instance, key: key.publicKey, iat: 1_800_000_000).signed(by: endorser)
    }

    func trust(_ candidates: [EndorsementChain.Candidate], root: P256PublicKey?) -> [String: KeyTrust] {
        EndorsementChain.evaluate(candidates, root: root)
    }

    @Test("root → first → second (a rotation): both trusted, each naming its endorser")
    func chainToTheRoot() throws {
        let result = trust([
            candidate(first, endorsement: try endorse(first, by: root)),
            candidate(second, endorsement: try endorse(second, by: first)),
        ], root: root.publicKey)
        #expect(result[first.publicKey.thumbprint] == .endorsed(endorser: KeyTrust.rootEndorser))
        #expect(result[second.publicKey.thumbprint] == .endorsed(endorser: first.publicKey.thumbprint))
    }

    @Test("no root configured: nothing but own keys is trusted")
    func noRoot() throws {
        let result = trust([candidate(first, endorsement: try endorse(first, by: root)),
                            candidate(second, endorsement: nil, own: true)], root: nil)
        #expect(result[first.publicKey.thumbprint]?.isTrusted == false)
        #expect(result[second.publicKey.thumbprint] == .own)
    }

    @Test("an endorser that is revoked counts for nothing: the successor needs the root again")
    func revokedEndorser() throws {
        let result = trust([
            candidate(first, endorsement: try endorse(first, by: root), revoked: true),
            candidate(second, endorsement: try endorse(second, by: first)),
        ], root: root.publicKey)
        #expect(result[second.publicKey.thumbprint]?.problem?.contains("revoked") == true)
    }

    @Test("a chain through an unendorsed key, a key of another instance, or a cycle is not trusted")
    func brokenChains() throws {
        let unendorsed = trust([
            candidate(first, endorsement: nil),
            candidate(second, endorsement: try endorse(second, by: first)),
        ], root: root.publicKey)
        #expect(unendorsed[second.publicKey.thumbprint]?.isTrusted == false)

        let crossInstance = trust([
            candidate(first, instance: "host-a", endorsement: try endorse(first, by: root, instance: "host-a")),
            candidate(second, endorsement: try endorse(second, by: first)),
        ], root: root.publicKey)
        #expect(crossInstance[first.publicKey.thumbprint]?.isTrusted == true)
        #expect(crossInstance[second.publicKey.thumbprint]?.problem?.contains("another instance") == true)

        let cycle = trust([
            candidate(first, endorsement: try endorse(first, by: second)),
            candidate(second, endorsement: try endorse(second, by: first)),
        ], root: root.publicKey)
        #expect(cycle.values.allSatisfy { !$0.isTrusted })
    }

    @Test("an endorsement for another key, another instance, a forged signature, or another type is not trusted")
    func forgedEndorsements() throws {
        let forger = try P256PrivateKey.generate()
        // Names the root's kid in its header but is signed by another key.
        let header = #"{"alg":"ES256","kid":"\#(root.publicKey.thumbprint)","typ":"stepsign-key-endorsement+jwt"}"#
        let forged = try JWS.signES256(headerJSON: Array(header.utf8),
                                       payload: KeyEndorsement(instance: "host-b", key: first.publicKey, iat: 1).jsonBytes,
                                       key: forger)
        let checkpointTyped = try JWS.signES256(
            headerJSON: Array(#"{"alg":"ES256","kid":"\#(root.publicKey.thumbprint)","typ":"stepsign+jwt"}"#.utf8),
            payload: KeyEndorsement(instance: "host-b", key: first.publicKey, iat: 1).jsonBytes, key: root)
        for endorsement in [
            try endorse(second, by: root),                      // another key's endorsement
            try endorse(first, by: root, instance: "host-c"),   // another instance
            forged,
            checkpointTyped,
            "not a jws",
        ] {
            let result = trust([candidate(first, endorsement: endorsement)], root: root.publicKey)
            #expect(result[first.publicKey.thumbprint]?.isTrusted == false, "\(endorsement)")
        }
    }

    @Test("how others see an own key: through its own predecessors' endorsements, up to the root, or not at all")
    func ownKeySeenByOthers() throws {
        let candidates = [
            candidate(first, endorsement: try endorse(first, by: root), own: true),
            candidate(second, endorsement: try endorse(second, by: first), own: true),
        ]
        let decided = trust(candidates, root: root.publicKey)
        #expect(decided[second.publicKey.thumbprint] == .own)
        #expect(EndorsementChain.trustSeenByOthers(of: second.publicKey.thumbprint, candidates, root: root.publicKey,
                                                   decided: decided) == .endorsed(endorser: first.publicKey.thumbprint))
        let unendorsed = [candidate(first, endorsement: nil, own: true),
                          candidate(second, endorsement: try endorse(second, by: first), own: true)]
        #expect(EndorsementChain.trustSeenByOthers(of: second.publicKey.thumbprint, unendorsed, root: root.publicKey,
                                                   decided: trust(unendorsed, root: root.publicKey)).isTrusted == false)
    }
}
