import StepSignCrypto
import Testing

/// RFC 7914 §12 test vectors. The fourth (N = 1048576, 1 GiB of memory) is skipped: too slow
/// and too large for the test machines; the first three cover N, r and p.
@Suite("Scrypt (RFC 7914 §12)")
struct ScryptTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var password: String, salt: String, n: UInt64, r: UInt32, p: UInt32, hex: String
        var testDescription: String { "P=\"\(password)\" N=\(n) r=\(r) p=\(p)" }
    }

    static let vectors = [
        Vector(password: "", salt: "", n: 16, r: 1, p: 1,
               hex: "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"),
        Vector(password: "password", salt: "NaCl", n: 1024, r: 8, p: 16,
               hex: "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"),
        Vector(password: "pleaseletmein", salt: "SodiumChloride", n: 16384, r: 8, p: 1,
               hex: "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887"),
    ]

    @Test("derives the RFC 7914 known answers", arguments: vectors)
    func knownAnswer(vector: Vector) throws {
        let key = try Scrypt.derive(password: Array(vector.password.utf8), salt: Array(vector.salt.utf8),
                                    parameters: ScryptParameters(n: vector.n, r: vector.r, p: vector.p), length: 64)
        #expect(Hex.encode(key) == vector.hex)
    }

    @Test("refuses n that is not a power of two")
    func refusesBadN() {
        #expect(throws: OpenSSLError.self) {
            try Scrypt.derive(password: [1], salt: [2], parameters: ScryptParameters(n: 1000, r: 8, p: 1), length: 32)
        }
    }
}
