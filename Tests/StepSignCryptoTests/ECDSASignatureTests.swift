import StepSignCrypto
import Testing

@Suite("ECDSASignature raw r||s ↔ DER")
struct ECDSASignatureTests {
    static func raw(r: [UInt8], s: [UInt8]) -> [UInt8] { r + s }

    @Test("round-trips ordinary values")
    func roundTrips() throws {
        let raw = (0..<64).map { UInt8($0 + 1) }
        let der = try ECDSASignature.derFromRaw(raw)
        #expect(der.first == 0x30)
        #expect(try ECDSASignature.rawFromDER(der) == raw)
    }

    @Test("r and s with leading zero bytes are left-padded back to 32")
    func leadingZeros() throws {
        let r = [UInt8](repeating: 0, count: 3) + [UInt8](repeating: 0x11, count: 29)
        let s = [UInt8](repeating: 0, count: 31) + [0x05]
        let der = try ECDSASignature.derFromRaw(r + s)
        // r: INTEGER of 29 bytes; s: INTEGER of 1 byte.
        #expect(der == [0x30, 2 + 29 + 2 + 1, 0x02, 29] + [UInt8](repeating: 0x11, count: 29) + [0x02, 0x01, 0x05])
        #expect(try ECDSASignature.rawFromDER(der) == r + s)
    }

    @Test("r and s with the high bit set get a 0x00 in DER and lose it again")
    func highBit() throws {
        let r = [UInt8](repeating: 0xff, count: 32)
        let s = [0x80] + [UInt8](repeating: 0x01, count: 31)
        let der = try ECDSASignature.derFromRaw(r + s)
        #expect(der.count == 2 + 2 * (2 + 33))
        #expect(der[2...4] == [0x02, 33, 0x00])
        #expect(try ECDSASignature.rawFromDER(der) == r + s)
    }

    @Test("raw signatures must be 64 bytes", arguments: [0, 63, 65, 128])
    func rawLength(count: Int) {
        #expect(throws: ECDSASignatureError.wrongRawLength(count)) {
            try ECDSASignature.derFromRaw([UInt8](repeating: 1, count: count))
        }
    }

    @Test("non-DER input is refused: garbage, trailing bytes, non-minimal integers")
    func strictDER() throws {
        let der = try ECDSASignature.derFromRaw((0..<64).map { UInt8($0 + 1) })
        #expect(throws: ECDSASignatureError.malformedDER) { try ECDSASignature.rawFromDER([0x30, 0x00, 0x01]) }
        #expect(throws: ECDSASignatureError.malformedDER) { try ECDSASignature.rawFromDER(der + [0]) }
        #expect(throws: ECDSASignatureError.malformedDER) { try ECDSASignature.rawFromDER([]) }
        // r = 0x00 0x01 (a needless leading zero)
        #expect(throws: ECDSASignatureError.malformedDER) {
            try ECDSASignature.rawFromDER([0x30, 0x07, 0x02, 0x02, 0x00, 0x01, 0x02, 0x01, 0x01])
        }
    }

    @Test("integers longer than 32 bytes are refused")
    func tooLong() {
        let r = [UInt8](repeating: 0x01, count: 33)
        let der: [UInt8] = [0x30, UInt8(2 + 33 + 3), 0x02, 33] + r + [0x02, 0x01, 0x01]
        #expect(throws: ECDSASignatureError.malformedDER) { try ECDSASignature.rawFromDER(der) }
    }
}
