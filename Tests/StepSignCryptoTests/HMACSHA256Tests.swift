import StepSignCrypto
import Testing

@Suite struct HMACSHA256Tests {
    /// RFC 4231 test cases 1 and 2: known answers nobody here computed.
    @Test func matchesRFC4231() {
        let case1 = HMACSHA256.mac(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8))
        #expect(Hex.encode(case1) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        let case2 = HMACSHA256.mac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(Hex.encode(case2) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func anotherKeyGivesAnotherMAC() {
        let message = Array("alice".utf8)
        #expect(HMACSHA256.mac(key: [1], message: message) != HMACSHA256.mac(key: [2], message: message))
    }
}
