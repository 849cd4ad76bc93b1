import Foundation
import StepSignCrypto
import Testing

@Suite("TrustedKeys")
struct TrustedKeysTests {
    @Test("a PEM bundle gives every key under its thumbprint")
    func pemBundle() throws {
        let a = try P256PrivateKey.generate().publicKey, b = try P256PrivateKey.generate().publicKey
        let trusted = try TrustedKeys(parsing: "# comment\n" + a.spkiPEM + "\n" + b.spkiPEM)
        #expect(trusted.all.map(\.thumbprint) == [a.thumbprint, b.thumbprint])
        #expect(trusted.key(kid: a.thumbprint)?.spkiPEM == a.spkiPEM)
        #expect(trusted.key(kid: b.thumbprint)?.spkiPEM == b.spkiPEM)
        #expect(trusted.key(kid: "nope") == nil)
    }

    @Test("a JWKS round-trips through jwks and pemBundle")
    func roundTrips() throws {
        let keys = [try P256PrivateKey.generate().publicKey, try P256PrivateKey.generate().publicKey]
        let trusted = TrustedKeys(keys: keys)
        let json = String(decoding: try JSONEncoder().encode(trusted.jwks), as: UTF8.self)
        #expect(try TrustedKeys(parsing: json).jwks == trusted.jwks)
        #expect(try TrustedKeys(parsing: trusted.pemBundle).jwks == trusted.jwks)
    }

    @Test("a single JWK document is accepted")
    func singleJWK() throws {
        let key = try P256PrivateKey.generate().publicKey
        let json = String(decoding: try JSONEncoder().encode(key.jwk), as: UTF8.self)
        #expect(try TrustedKeys(parsing: json).key(kid: key.thumbprint) != nil)
    }

    @Test("non-ES256 keys in a JWKS are skipped when a usable key remains")
    func skipsOtherKeys() throws {
        let key = try P256PrivateKey.generate().publicKey
        let other = try P256PrivateKey.generate().publicKey
        var encryption = other.jwk
        encryption.use = "enc"
        let json = """
            {"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB","kid":"rsa"},{"kty":"EC","crv":"P-384","x":"AA","y":"AA"},
            \(String(decoding: try JSONEncoder().encode(encryption), as: UTF8.self)),
            \(String(decoding: try JSONEncoder().encode(key.jwk), as: UTF8.self))]}
            """
        let trusted = try TrustedKeys(parsing: json)
        #expect(trusted.all.map(\.thumbprint) == [key.thumbprint])
    }

    @Test("a JWKS without any usable key is an error")
    func noUsableKey() {
        #expect(throws: P256KeyError.self) { try TrustedKeys(parsing: #"{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}"#) }
        #expect(throws: P256KeyError.self) { try TrustedKeys(parsing: #"{"keys":[]}"#) }
    }

    @Test("a broken P-256 key in a JWKS is an error, not skipped")
    func brokenKeyIsError() throws {
        var jwk = try P256PrivateKey.generate().publicKey.jwk
        jwk.x = "AAAA"
        let json = String(decoding: try JSONEncoder().encode(JWKS(keys: [jwk])), as: UTF8.self)
        #expect(throws: P256KeyError.self) { try TrustedKeys(parsing: json) }
    }

    @Test("a JWKS kid other than the thumbprint is an alias; both find the key")
    func kidAlias() throws {
        let key = try P256PrivateKey.generate().publicKey
        var jwk = key.jwk
        jwk.kid = "idv-2025"
        let trusted = try TrustedKeys(parsing: String(decoding: try JSONEncoder().encode(JWKS(keys: [jwk])), as: UTF8.self))
        #expect(trusted.key(kid: "idv-2025")?.thumbprint == key.thumbprint)
        #expect(trusted.key(kid: key.thumbprint)?.thumbprint == key.thumbprint)
        #expect(trusted.jwks.keys.map(\.kid) == ["idv-2025"])
    }

    @Test("two different keys claiming one kid is an error")
    func duplicateKid() throws {
        var a = try P256PrivateKey.generate().publicKey.jwk, b = try P256PrivateKey.generate().publicKey.jwk
        a.kid = "same"
        b.kid = "same"
        let json = String(decoding: try JSONEncoder().encode(JWKS(keys: [a, b])), as: UTF8.self)
        #expect(throws: P256KeyError.self) { try TrustedKeys(parsing: json) }
    }

    @Test("bad keys files are errors", arguments: [
        "", "hello", "{", #"{"keys":"x"}"#, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        "-----BEGIN PUBLIC KEY-----\nAAAA\n",
    ])
    func badFiles(text: String) {
        #expect(throws: P256KeyError.self) { try TrustedKeys(parsing: text) }
    }
}
