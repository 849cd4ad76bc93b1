import StepSignCrypto
import Testing

/// The signer's own reading of libcrypto's DER (`rawFromCanonicalDER`, no bignums) and its
/// in-place low-S: the same answers as libcrypto's decoding and ``ECDSALowS/normalized(_:)``,
/// and nil for every DER that is not the canonical form, which then goes to libcrypto.
@Suite("Canonical DER of the daemon's own signatures")
struct CanonicalDERTests {
    /// r and s of every shape: random, with leading zero bytes, with the high bit set, tiny.
    private static func halves() -> [[UInt8]] {
        var generator = SystemRandomNumberGenerator()
        var halves: [[UInt8]] = []
        for _ in 0..<200 { halves.append((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }) }
        for zeros in [1, 2, 8, 31] {
            halves.append([UInt8](repeating: 0, count: zeros) + (zeros..<32).map { _ in UInt8.random(in: 1 ... .max, using: &generator) })
        }
        halves.append([UInt8](repeating: 0xff, count: 32))
        halves.append([0x80] + [UInt8](repeating: 0, count: 31))
        halves.append([UInt8](repeating: 0, count: 31) + [0x01])
        halves.append([UInt8](repeating: 0, count: 31) + [0x80])
        return halves
    }

    @Test("libcrypto's DER of any r||s reads back as libcrypto reads it")
    func agreesWithLibcrypto() throws {
        let halves = Self.halves()
        for (index, r) in halves.enumerated() {
            let s = halves[(index * 7 + 3) % halves.count]
            let der = try ECDSASignature.derFromRaw(r + s)
            #expect(ECDSASignature.rawFromCanonicalDER(der) == r + s, "\(der)")
            #expect(ECDSASignature.rawFromCanonicalDER(der) == (try ECDSASignature.rawFromDER(der)))
        }
    }

    @Test("anything but the canonical form is left to libcrypto", arguments: [
        ("empty", [UInt8]()),
        ("not a SEQUENCE", [0x31, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]),
        ("a trailing byte", [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x00]),
        ("a length past the end", [0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]),
        ("a long-form length", [0x30, 0x81, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]),
        ("a negative r", [0x30, 0x06, 0x02, 0x01, 0x81, 0x02, 0x01, 0x01]),
        ("a non-minimal r", [0x30, 0x07, 0x02, 0x02, 0x00, 0x01, 0x02, 0x01, 0x01]),
        ("an empty r", [0x30, 0x05, 0x02, 0x00, 0x02, 0x01, 0x01]),
        ("an INTEGER of 33 bytes without its reason", [0x30, 0x26, 0x02, 0x21] + [UInt8](repeating: 0x01, count: 33) + [0x02, 0x01, 0x01]),
        ("an INTEGER of 34 bytes", [0x30, 0x27, 0x02, 0x22, 0x00] + [UInt8](repeating: 0x81, count: 33) + [0x02, 0x01, 0x01]),
        ("an OCTET STRING for s", [0x30, 0x06, 0x02, 0x01, 0x01, 0x04, 0x01, 0x01]),
        ("one INTEGER only", [0x30, 0x03, 0x02, 0x01, 0x01]),
    ] as [(String, [UInt8])])
    func nonCanonical(_ name: String, _ der: [UInt8]) {
        #expect(ECDSASignature.rawFromCanonicalDER(der) == nil, "\(name)")
    }

    @Test("low-S in place gives what normalized gives, for high and low s")
    func normalizeInPlace() {
        let halves = Self.halves()
        var high = 0
        for (index, r) in halves.enumerated() {
            let s = halves[(index * 5 + 1) % halves.count]
            // A signature's s is below the group's order n (FFFFFFFF 00000000 …).
            if s.starts(with: [0xFF, 0xFF, 0xFF, 0xFF]) { continue }
            var raw = r + s
            let expected = ECDSALowS.normalized(raw)
            if expected != raw { high += 1 }
            ECDSALowS.normalize(&raw)
            #expect(raw == expected)
            #expect(ECDSALowS.isLowS(raw))
        }
        #expect(high > 0, "some s were high")
    }
}
