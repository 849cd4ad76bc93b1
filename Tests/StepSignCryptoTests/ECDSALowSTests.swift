import StepSignCrypto
import Testing

@Suite("ECDSA low-S and strict JSON members")
struct ECDSALowSTests {
    @Test("every ES256 signature the key makes is low-S; its high-S twin still verifies mathematically")
    func signaturesAreLowS() throws {
        let key = try P256PrivateKey.generate()
        let message = Array("message".utf8)
        for _ in 0..<64 {
            let raw = try key.signatureES256(for: message)
            #expect(ECDSALowS.isLowS(raw))
            let twin = ECDSALowS.twin(raw)
            #expect(!ECDSALowS.isLowS(twin))
            #expect(key.publicKey.isValidSignatureES256(twin, for: message))
            #expect(ECDSALowS.normalized(twin) == raw)
        }
    }

    @Test("duplicate member names are found at any depth and after unescaping")
    func duplicates() throws {
        #expect(throws: JSONDuplicateMembers.Finding.duplicate("sub")) {
            try JSONDuplicateMembers.check(Array(#"{"sub":"a","x":1,"sub":"b"}"#.utf8))
        }
        #expect(throws: JSONDuplicateMembers.Finding.duplicate("payload")) {
            try JSONDuplicateMembers.check(Array(#"{"payload":"a","p\u0061yload":"b"}"#.utf8))
        }
        #expect(throws: JSONDuplicateMembers.Finding.duplicate("uid")) {
            try JSONDuplicateMembers.check(Array(#"{"peer":{"uid":1,"uid":2}}"#.utf8))
        }
        try JSONDuplicateMembers.check(Array(#"{"a":{"b":1},"b":[{"a":1},{"a":2}],"c":"\"}\ud83d\ude00"}"#.utf8))
        #expect(throws: JSONDuplicateMembers.Finding.malformed) {
            try JSONDuplicateMembers.check(Array(#"{"a":1"#.utf8))
        }
    }
}
