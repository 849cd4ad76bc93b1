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
}
