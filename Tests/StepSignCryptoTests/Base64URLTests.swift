import StepSignCrypto
import Testing

@Suite("Base64URL (RFC 7515 §2)")
struct Base64URLTests {
    @Test("encodes without padding, with - and _")
    func encodesUnpaddedURLAlphabet() {
        #expect(Base64URL.encode([UInt8]()) == "")
        #expect(Base64URL.encode(Array("f".utf8)) == "Zg")
        #expect(Base64URL.encode(Array("fo".utf8)) == "Zm8")
        #expect(Base64URL.encode(Array("foo".utf8)) == "Zm9v")
        #expect(Base64URL.encode([0xfb, 0xff, 0xbf]) == "-_-_")
    }

    @Test("round-trips every length up to 64 bytes")
    func roundTrips() {
        for length in 0...64 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
    }

    @Test("rejects padding, +, /, whitespace and other characters",
          arguments: ["Zg==", "Zm8=", "+_-_", "/_-_", "Zm9v\n", " Zm9v", "Zm 9v", "Zm9v.", "Zm9ü"])
    func rejectsNonURLCharacters(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }

    @Test("rejects a length of 1 modulo 4")
    func rejectsImpossibleLength() {
        #expect(Base64URL.decode("Z") == nil)
        #expect(Base64URL.decode("Zm9vZ") == nil)
    }

    @Test("rejects non-zero unused trailing bits (non-canonical encodings)")
    func rejectsNonCanonicalTrailingBits() {
        #expect(Base64URL.decode("Zg") == Array("f".utf8))
        #expect(Base64URL.decode("Zh") == nil)
        #expect(Base64URL.decode("Zm8") == Array("fo".utf8))
        #expect(Base64URL.decode("Zm9") == nil)
    }
}
