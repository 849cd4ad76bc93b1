import Foundation
import StepSignTestSupport
import StepSignCrypto
import StepSignFormat
import Testing

@Suite("StepSignSignature")
struct StepSignSignatureTests {
    let key: P256PrivateKey
    let trusted: TrustedKeys
    let claims = SignatureClaimsTests.claims()

    init() throws {
        key = try P256PrivateKey.generate()
        trusted = TrustedKeys(keys: [key.publicKey])
    }

    var kid: String { key.publicKey.thumbprint }

    @Test("the header is exactly {alg, kid, typ} in that order")
    func headerIsFixed() throws {
        let compact = try StepSignSignature.make(claims: claims, key: key, kid: kid)
        let jws = try JWS.parse(compact)
        #expect(String(decoding: jws.headerJSON, as: UTF8.self) == #"{"alg":"ES256","kid":"\#(kid)","typ":"stepsign+jwt"}"#)
        #expect(jws.signature.count == 64)
    }

    @Test("a signature made here verifies and gives back the claims")
    func roundTrip() throws {
        let compact = try StepSignSignature.make(claims: claims, key: key, kid: kid)
        #expect(try StepSignSignature.verify(compact, trustedKeys: trusted) == claims)
    }

    @Test("a standard JOSE library (PyJWT) verifies it unchanged")
    func pyJWTVerifies() throws {
        let compact = try StepSignSignature.make(claims: claims, key: key, kid: kid)
        let script = """
            import sys, jwt
            c = jwt.decode(sys.argv[1], sys.argv[2], algorithms=["ES256"])
            h = jwt.get_unverified_header(sys.argv[1])
            assert h == {"alg": "ES256", "kid": sys.argv[3], "typ": "stepsign+jwt"}, h
            print(c["sub"], c["payloadLength"])
            """
        let result = try Tools.python(script, compact, key.publicKey.spkiPEM, kid)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "alice 18\n")
    }

    @Test("alg none is refused")
    func algNone() throws {
        let forged = Forgery.unsigned(header: #"{"alg":"none","kid":"\#(kid)","typ":"stepsign+jwt"}"#, claims: claims)
        #expect(throws: SignatureVerificationError.algorithmNotAllowed("none")) { try StepSignSignature.verify(forged, trustedKeys: trusted) }
    }

    @Test("HS256 with the public key as the HMAC secret is refused")
    func hs256WithPublicKey() throws {
        let forged = try Forgery.hs256(kid: kid, claims: claims, secret: key.publicKey.spkiPEM)
        #expect(throws: SignatureVerificationError.algorithmNotAllowed("HS256")) { try StepSignSignature.verify(forged, trustedKeys: trusted) }
    }

    @Test("an unknown kid is refused")
    func unknownKid() throws {
        let other = try P256PrivateKey.generate()
        let compact = try StepSignSignature.make(claims: claims, key: other, kid: other.publicKey.thumbprint)
        #expect(throws: SignatureVerificationError.unknownKeyID(other.publicKey.thumbprint)) {
            try StepSignSignature.verify(compact, trustedKeys: trusted)
        }
    }

    @Test("a missing kid is refused")
    func missingKid() throws {
        let compact = try JWS.signES256(headerJSON: Array(#"{"alg":"ES256","typ":"stepsign+jwt"}"#.utf8), payload: claims.jsonBytes, key: key)
        #expect(throws: SignatureVerificationError.missingKeyID) { try StepSignSignature.verify(compact, trustedKeys: trusted) }
    }

    @Test("a signature by another key under a trusted kid is refused")
    func wrongKeyForKid() throws {
        let other = try P256PrivateKey.generate()
        let compact = try StepSignSignature.make(claims: claims, key: other, kid: kid)
        #expect(throws: SignatureVerificationError.badSignature) { try StepSignSignature.verify(compact, trustedKeys: trusted) }
    }

    @Test("a tampered payload is refused")
    func tamperedPayload() throws {
        let compact = try StepSignSignature.make(claims: claims, key: key, kid: kid)
        let forged = Forgery.replacingPayload(of: compact, with: SignatureClaimsTests.claims(payload: "pay 999 EUR to Mallory"))
        #expect(throws: SignatureVerificationError.badSignature) { try StepSignSignature.verify(forged, trustedKeys: trusted) }
    }

    @Test("a typ other than stepsign+jwt is refused")
    func wrongTyp() throws {
        let compact = try JWS.signES256(headerJSON: Array(#"{"alg":"ES256","kid":"\#(kid)","typ":"JWT"}"#.utf8), payload: claims.jsonBytes, key: key)
        #expect(throws: SignatureVerificationError.wrongType("JWT")) { try StepSignSignature.verify(compact, trustedKeys: trusted) }
    }

    @Test("a correctly signed payload that is not stepsign claims is refused as invalid")
    func malformedClaims() throws {
        let compact = try JWS.signES256(headerJSON: StepSignSignature.headerJSON(kid: kid), payload: Array(#"{"sub":"alice"}"#.utf8), key: key)
        #expect {
            try StepSignSignature.verify(compact, trustedKeys: trusted)
        } throws: { error in
            guard let error = error as? SignatureVerificationError, case .malformedClaims = error else { return false }
            return !error.isBadInput
        }
    }

    @Test("text that is not a JWS is bad input, not invalid", arguments: ["", "garbage", "a.b.c", "eyJhbGciOiJFUzI1NiJ9.e30"])
    func notAJWS(text: String) {
        #expect {
            try StepSignSignature.verify(text, trustedKeys: trusted)
        } throws: { error in
            (error as? SignatureVerificationError)?.isBadInput == true
        }
    }
}

/// Hand-made forgeries, built the way an attacker would.
enum Forgery {
    /// `header.claims.` with an empty signature.
    static func unsigned(header: String, claims: SignatureClaims) -> String {
        Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(claims.jsonBytes) + "."
    }

    /// An HS256 JWS keyed with `secret` (the classic key-confusion attack), HMAC by openssl.
    static func hs256(kid: String, claims: SignatureClaims, secret: String) throws -> String {
        let input = Base64URL.encode(Array(#"{"alg":"HS256","kid":"\#(kid)","typ":"stepsign+jwt"}"#.utf8)) + "." + Base64URL.encode(claims.jsonBytes)
        let script = """
            import sys, hmac, hashlib, base64
            mac = hmac.new(sys.argv[2].encode(), sys.argv[1].encode(), hashlib.sha256).digest()
            print(base64.urlsafe_b64encode(mac).rstrip(b"=").decode())
            """
        let result = try Tools.python(script, input, secret)
        return input + "." + result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `compact` with its payload swapped for `claims`, keeping header and signature.
    static func replacingPayload(of compact: String, with claims: SignatureClaims) -> String {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        return "\(parts[0]).\(Base64URL.encode(claims.jsonBytes)).\(parts[2])"
    }
}
