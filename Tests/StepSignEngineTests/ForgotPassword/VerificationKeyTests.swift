@testable import StepSignEngine
import Testing

@Suite("Verification keys")
struct VerificationKeyTests {
    @Test("the word list holds 256 distinct lowercase words of 3 to 7 letters")
    func wordList() {
        #expect(VerificationKey.words.count == 256)
        #expect(Set(VerificationKey.words).count == 256)
        #expect(VerificationKey.words.allSatisfy { word in
            (3...7).contains(word.count) && word.unicodeScalars.allSatisfy { ("a"..."z").contains($0) }
        })
    }

    @Test("a key is two listed words joined by a dash")
    func shape() throws {
        let words = Set(VerificationKey.words)
        for _ in 0..<200 {
            let key = try VerificationKey.generate()
            let parts = key.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            #expect(parts.count == 2)
            #expect(parts.allSatisfy(words.contains))
        }
    }

    @Test("keys vary (16 bits: 1 000 draws give hundreds of different keys)")
    func variety() throws {
        var seen = Set<String>()
        for _ in 0..<1_000 { seen.insert(try VerificationKey.generate()) }
        #expect(seen.count > 900)
        #expect(VerificationKey.entropyBits == 16)
    }
}
