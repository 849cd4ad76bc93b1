import Foundation
@testable import StepSignEngine
import StepSignCrypto
import Testing

/// An IDV assertion is accepted once (SPEC §5.1, `setIDVBiometricAssertion`: "single use"):
/// what the engine marks used is the hash of its signing input, not of its signature, because
/// anyone holding an ES256 assertion can make a second signature string of it without the key,
/// the high-S twin (r, n − s), which verifies too (RFC 7518 accepts both forms, and so does the
/// daemon for the IDV server's signatures).
///
/// Over the protocol this rule cannot be seen alone: a challenge is answered once, and a twin
/// sent to a later challenge carries the earlier nonce, which that challenge's nonce binding
/// refuses first (IDVBiometricTests). So it is checked here, on the verifier that makes the mark.
@Suite("IDV assertion single use")
struct IDVAssertionSingleUseTests {
    static let issuer = "https://idv.example"
    static let peer = Peer(uid: 1000, gid: 1000, pid: 42, comm: "tester", groups: [])

    let key: P256PrivateKey
    let challenge: IDVChallenge
    let now = Date()

    init() throws {
        key = try P256PrivateKey.generate()
        let nonce = Base64URL.encode(try SecureRandom.bytes(count: 16))
        challenge = IDVChallenge(nonce: nonce, text: IDVChallengeText.bytes(nonce: nonce, user: "alice", payload: "wire 5000 EUR",
                                                                           reason: "high-value transfer", peer: Self.peer))
    }

    /// The claims of a good assertion for the challenge, issued at `iat`.
    func claims(iat: Int) -> [UInt8] {
        Array(#"{"iss":"\#(Self.issuer)","sub":"alice","nonce":"\#(challenge.nonce)","txn":"\#(IDVChallengeText.txn(of: challenge.text))","iat":\#(iat),"exp":\#(iat + 120),"result":"match"}"#.utf8)
    }

    /// `claims` signed by the IDV server's key (ECDSA with a fresh random k each time).
    func assertion(_ claims: [UInt8]) throws -> String {
        try JWS.signES256(headerJSON: Array(#"{"alg":"ES256"}"#.utf8), payload: claims, key: key)
    }

    func verify(_ assertion: String) throws -> IDVAssertionVerifier.SingleUse {
        try IDVAssertionVerifier().verify(assertion, issuer: Self.issuer, keys: TrustedKeys(keys: [key.publicKey]), maxAgeSeconds: 300,
                                          user: "alice", challenge: challenge, now: now)
    }

    @Test("an assertion and its high-S twin both verify, and are one assertion for single use")
    func highSTwinIsTheSameAssertion() throws {
        let iat = Int(now.timeIntervalSince1970)
        let original = try assertion(claims(iat: iat))
        let parts = original.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let signature = try #require(Base64URL.decode(parts[2]))
        let highS = ECDSALowS.twin(signature)
        let twin = parts[0] + "." + parts[1] + "." + Base64URL.encode(highS)
        #expect(ECDSALowS.isLowS(signature) && !ECDSALowS.isLowS(highS) && twin != original)

        let mark = try verify(original)
        #expect(try verify(twin) == mark, "the twin would count as a second, unused assertion")
        // Another signature of the same claims is the same assertion too.
        let again = try assertion(claims(iat: iat))
        #expect(again != original)
        #expect(try verify(again) == mark)
        // The control: other claims are another assertion, with another mark.
        #expect(try verify(try assertion(claims(iat: iat - 1))).value != mark.value)
    }
}
