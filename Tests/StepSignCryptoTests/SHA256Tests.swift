import StepSignCrypto
import Testing

/// SHA-256 (FIPS 180-4) through libcrypto's low-level functions, in one part or several.
@Suite struct SHA256Tests {
    private func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

    @Test("the FIPS 180-2 examples: the empty message, \"abc\", the 448-bit message and a million \"a\"s")
    func knownAnswers() {
        #expect(hex(SHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(SHA256.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(SHA256.hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(hex(SHA256.hash([UInt8](repeating: 0x61, count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("a message in parts hashes as the parts joined, at lengths around the 64-byte block")
    func partsAreTheConcatenation() {
        var generator = SystemRandomNumberGenerator()
        let lengths = [0, 1, 31, 32, 55, 56, 63, 64, 65, 119, 128, 1000]
        for first in lengths {
            for second in lengths {
                let a = (0..<first).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
                let b = (0..<second).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
                #expect(SHA256.hash(a, b) == SHA256.hash(a + b), "\(first) + \(second)")
                #expect(SHA256.hash(prefix: 0x01, a, b) == SHA256.hash([0x01] + a + b), "0x01 + \(first) + \(second)")
                #expect(SHA256.hash(prefix: 0x00, a) == SHA256.hash([0x00] + a), "0x00 + \(first)")
            }
        }
    }

    @Test("a collection without contiguous storage hashes as its bytes in an array")
    func nonContiguousCollections() {
        let bytes = (0..<300).lazy.map { UInt8(truncatingIfNeeded: $0 &* 7) }
        #expect(SHA256.hash(bytes) == SHA256.hash(Array(bytes)))
        #expect(SHA256.hash(prefix: 0x00, bytes) == SHA256.hash([0x00] + Array(bytes)))
        // A native string's UTF-8 view, as the ledger's leaves are hashed.
        let jws = String(repeating: "eyJhbGciOiJFUzI1NiJ9.", count: 40)
        #expect(SHA256.hash(prefix: 0x00, jws.utf8) == SHA256.hash([0x00] + Array(jws.utf8)))
    }
}
