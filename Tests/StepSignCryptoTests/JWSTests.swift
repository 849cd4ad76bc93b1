import StepSignCrypto
import Testing

@Suite("JWS compact serialization (RFC 7515)")
struct JWSTests {
    /// RFC 7515 Appendix A.3: the ES256 example and its public key.
    static let rfcJWK = JWK(kty: "EC", crv: "P-256",
                            x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
                            y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0")
    static let rfcJWS = "eyJhbGciOiJFUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        + ".DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"

    @Test("the RFC 7515 A.3 ES256 example verifies with its JWK")
    func rfc7515A3Verifies() throws {
        let key = try P256PublicKey(jwk: Self.rfcJWK)
        let jws = try JWS.parse(Self.rfcJWS)
        #expect(jws.header.alg == "ES256")
        #expect(jws.signature.count == 64)
        #expect(String(decoding: jws.payload, as: UTF8.self).hasPrefix("{\"iss\":\"joe\""))
        #expect(jws.isValidES256(key: key))
    }

    @Test("the RFC 7515 A.3 example with one flipped signature bit fails")
    func rfc7515A3FlippedBitFails() throws {
        let key = try P256PublicKey(jwk: Self.rfcJWK)
        let parsed = try JWS.parse(Self.rfcJWS)
        var signature = parsed.signature
        signature[40] ^= 0x01
        let parts = Self.rfcJWS.split(separator: ".")
        let tampered = try JWS.parse("\(parts[0]).\(parts[1]).\(Base64URL.encode(signature))")
        #expect(!tampered.isValidES256(key: key))
    }

    @Test("a JWS made here parses back and verifies")
    func signParseVerify() throws {
        let key = try P256PrivateKey.generate()
        let compact = try JWS.signES256(headerJSON: Array(#"{"alg":"ES256"}"#.utf8), payload: Array("payload".utf8), key: key)
        let jws = try JWS.parse(compact)
        #expect(jws.payload == Array("payload".utf8))
        #expect(jws.isValidES256(key: key.publicKey))
        #expect(compact.hasPrefix(String(decoding: jws.signingInput, as: UTF8.self) + "."))
    }

    @Test("the compact text is the base64url of header and payload, a dot between, then 86 characters of signature, for every payload length mod 3")
    func compactTextLayout() throws {
        let key = try P256PrivateKey.generate()
        for header in [Array(#"{"alg":"ES256"}"#.utf8), Array(#"{"alg":"ES256","kid":"k"}"#.utf8), Array(#"{"alg":"ES256","x":1}"#.utf8)] {
            for length in 0..<7 {
                let payload = (0..<length).map { UInt8(truncatingIfNeeded: 0xF0 + $0) }
                let compact = try JWS.signES256(headerJSON: header, payload: payload, key: key)
                let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
                #expect(compact.hasPrefix(input + "."), "header \(header.count) payload \(length)")
                #expect(compact.utf8.count == input.utf8.count + 1 + 86)
                let jws = try JWS.parse(compact)
                #expect(jws.payload == payload)
                #expect(jws.isValidES256(key: key.publicKey))
            }
        }
    }

    @Test("an empty payload is allowed")
    func emptyPayload() throws {
        let key = try P256PrivateKey.generate()
        let compact = try JWS.signES256(headerJSON: Array(#"{"alg":"ES256"}"#.utf8), payload: [], key: key)
        #expect(try JWS.parse(compact).isValidES256(key: key.publicKey))
    }

    @Test("a JWS whose header says another alg is not a valid ES256 JWS even with a good signature")
    func otherAlgIsNotES256() throws {
        let key = try P256PrivateKey.generate()
        let compact = try JWS.signES256(headerJSON: Array(#"{"alg":"ES384"}"#.utf8), payload: [1], key: key)
        #expect(!(try JWS.parse(compact).isValidES256(key: key.publicKey)))
    }

    @Test("a header with crit is refused")
    func critRefused() throws {
        let key = try P256PrivateKey.generate()
        let compact = try JWS.signES256(headerJSON: Array(#"{"alg":"ES256","crit":["exp"],"exp":1}"#.utf8), payload: [1], key: key)
        #expect(!(try JWS.parse(compact).isValidES256(key: key.publicKey)))
    }

    @Test("text that is not three base64url parts is malformed", arguments: [
        "", "abc", "a.b", "a.b.c.d", ".e30.", "eyJhbGciOiJFUzI1NiJ9.e30", "eyJhbGciOiJFUzI1NiJ9.e30.AA==",
        "eyJhbGciOiJFUzI1NiJ9.e30.A+", " eyJhbGciOiJFUzI1NiJ9.e30.AA", "eyJhbGciOiJFUzI1NiJ9.e30.AA\n",
    ])
    func malformed(text: String) {
        #expect {
            try JWS.parse(text)
        } throws: { error in
            if case .malformed = error as? JWSError { return true }
            return false
        }
    }

    @Test("a header that is not a JSON object with a string alg is refused", arguments: [
        "not json", "[1,2]", "\"ES256\"", "{}", #"{"alg":1}"#, #"{"alg":"ES256""#,
    ])
    func badHeader(header: String) {
        let compact = Base64URL.encode(Array(header.utf8)) + ".e30.AA"
        #expect(throws: JWSError.self) { try JWS.parse(compact) }
    }
}
