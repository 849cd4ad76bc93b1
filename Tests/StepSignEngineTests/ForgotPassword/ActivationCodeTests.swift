@testable import StepSignEngine
import StepSignCrypto
import Testing

@Suite("Activation codes")
struct ActivationCodeTests {
    /// Cheap scrypt parameters: these tests check the hashing, not its cost.
    static let fast = ScryptParameters(n: 16, r: 1, p: 1)

    @Test("codes have the requested length and only alphabet characters", arguments: [6, 8, 32])
    func alphabetAndLength(length: Int) throws {
        let alphabet = Set(ActivationCode.alphabet)
        for _ in 0..<500 {
            let code = try ActivationCode.generate(length: length)
            #expect(code.count == length)
            #expect(code.allSatisfy(alphabet.contains))
        }
    }

    @Test("the alphabet is Crockford base32: 32 symbols, no I, L, O or U")
    func alphabetShape() {
        #expect(ActivationCode.alphabet.count == 32)
        #expect(Set(ActivationCode.alphabet).count == 32)
        #expect(!ActivationCode.alphabet.contains { "ILOU".contains($0) })
    }

    @Test("the default length 8 carries 40 bits")
    func entropy() {
        #expect(ActivationCode.defaultLength == 8)
        #expect(ActivationCode.entropyBits(length: ActivationCode.defaultLength) == 40)
    }

    @Test("10 000 codes are all different")
    func uniqueness() throws {
        var seen = Set<String>()
        for _ in 0..<10_000 { seen.insert(try ActivationCode.generate()) }
        #expect(seen.count == 10_000)
    }

    @Test("every symbol turns up about equally often")
    func uniformity() throws {
        var counts: [Character: Int] = [:]
        for _ in 0..<8_000 {
            for character in try ActivationCode.generate(length: 8) { counts[character, default: 0] += 1 }
        }
        // 64 000 draws over 32 symbols: 2 000 expected each, standard deviation about 44.
        #expect(counts.count == 32)
        #expect(counts.values.allSatisfy { (1_700...2_300).contains($0) })
    }

    @Test("rejection sampling stays below a bound that does not divide 256")
    func rejectionSampling() throws {
        let indices = try ActivationCode.uniformIndices(count: 10_000, below: 10)
        #expect(indices.count == 10_000)
        #expect(indices.allSatisfy { (0..<10).contains($0) })
        #expect(Set(indices).count == 10)
    }

    @Test("lengths outside 1...64 are refused", arguments: [0, -1, 65])
    func badLength(length: Int) {
        #expect(throws: ActivationCodeError.lengthOutOfRange(length)) { try ActivationCode.generate(length: length) }
    }

    @Test("normalization uppercases and drops spaces, dashes and underscores")
    func normalizeLoose() {
        #expect(ActivationCode.normalize("7k9m-2p3q") == "7K9M2P3Q")
        #expect(ActivationCode.normalize(" 7K9M 2P3Q\t") == "7K9M2P3Q")
        #expect(ActivationCode.normalize("7k_9m-2p 3q") == "7K9M2P3Q")
    }

    @Test("normalization maps Crockford look-alikes O to 0 and I, L to 1")
    func normalizeLookAlikes() {
        #expect(ActivationCode.normalize("oOiIlL") == "001111")
    }

    @Test("normalization keeps foreign characters, so they cannot match")
    func normalizeKeepsOthers() {
        #expect(ActivationCode.normalize("AB*CD") == "AB*CD")
    }

    @Test("a code's hash verifies the code, also typed loosely")
    func hashVerifiesRight() throws {
        let code = try ActivationCode.generate()
        let stored = try ActivationCode.hash(code, parameters: Self.fast)
        #expect(!stored.contains(code))
        #expect(try ActivationCode.matches(code, hash: stored))
        let loose = code.lowercased().prefix(4) + "-" + code.lowercased().dropFirst(4)
        #expect(try ActivationCode.matches(String(loose), hash: stored))
    }

    @Test("a code's hash refuses another code")
    func hashRefusesWrong() throws {
        let stored = try ActivationCode.hash("7K9M2P3Q", parameters: Self.fast)
        #expect(try !ActivationCode.matches("7K9M2P3R", hash: stored))
        #expect(try !ActivationCode.matches("", hash: stored))
    }

    @Test("a malformed stored hash is an error, not a mismatch")
    func malformedHash() {
        #expect(throws: ActivationCodeError.self) { try ActivationCode.matches("7K9M2P3Q", hash: "7K9M2P3Q") }
    }
}
