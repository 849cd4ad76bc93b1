import StepSignCrypto
import StepSignTestSupport
import Testing

/// The JWS of `Tests/Vectors/known-answer.json` (made by `Tests/Vectors/generate.py` with
/// Python `cryptography`, not by stepsign): our parser and verifier read its exact bytes.
@Suite("Known-answer JWS (crypto)")
struct KnownAnswerJWSTests {
    let vectors: KnownAnswerVectors
    let key: P256PrivateKey

    init() throws {
        vectors = try KnownAnswerVectors.load()
        key = try P256PrivateKey(pkcs8PEM: vectors.key.privateKeyPKCS8PEM)
    }

    @Test("the test key's thumbprint is the vector's kid, and its public PEM the vector's")
    func keyAndKid() throws {
        #expect(key.publicKey.thumbprint == vectors.key.kid)
        let publicKey = try P256PublicKey(spkiPEM: vectors.key.publicKeySPKIPEM)
        #expect(publicKey.x == key.publicKey.x && publicKey.y == key.publicKey.y)
        #expect(publicKey.thumbprint == vectors.key.kid)
    }

    @Test("parsing splits the JWS into exactly the vector's header, payload, signing input and signature")
    func parseGivesTheExactBytes() throws {
        let jws = try JWS.parse(vectors.signature.jws)
        #expect(jws.headerJSON == Array(vectors.signature.headerJSON.utf8))
        #expect(jws.payload == Array(vectors.signature.payloadJSON.utf8))
        #expect(jws.signingInput == Array(vectors.signature.signingInput.utf8))
        #expect(Hex.encode(jws.signature) == vectors.signature.signatureHex)
        #expect(jws.header == JWSHeader(alg: "ES256", kid: vectors.key.kid, typ: "stepsign+jwt"))
    }

    @Test("the fixed signature verifies; the signature is low-S")
    func fixedSignatureVerifies() throws {
        let jws = try JWS.parse(vectors.signature.jws)
        #expect(jws.isValidES256(key: key.publicKey))
        #expect(ECDSALowS.isLowS(jws.signature))
    }

    @Test("flipping any one bit of the signature, or one bit of the signing input, is refused")
    func oneBitChangesAreRefused() throws {
        let jws = try JWS.parse(vectors.signature.jws)
        for bit in 0..<(jws.signature.count * 8) {
            var signature = jws.signature
            signature[bit / 8] ^= 1 << (bit % 8)
            #expect(!key.publicKey.isValidSignatureES256(signature, for: jws.signingInput), "bit \(bit)")
        }
        for index in [0, jws.signingInput.count / 2, jws.signingInput.count - 1] {
            var input = jws.signingInput
            input[index] ^= 1
            #expect(!key.publicKey.isValidSignatureES256(jws.signature, for: input), "byte \(index)")
        }
    }

    @Test("signing the vector's header and payload gives the vector's signing input, and a signature that verifies")
    func signingReproducesTheSigningInput() throws {
        let compact = try JWS.signES256(headerJSON: Array(vectors.signature.headerJSON.utf8),
                                        payload: Array(vectors.signature.payloadJSON.utf8), key: key)
        let jws = try JWS.parse(compact)
        #expect(jws.signingInput == Array(vectors.signature.signingInput.utf8))
        #expect(jws.isValidES256(key: try P256PublicKey(spkiPEM: vectors.key.publicKeySPKIPEM)))
    }
}
