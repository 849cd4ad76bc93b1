/// Low-S normalisation of P-256 ECDSA signatures.
///
/// For every ECDSA signature (r, s), (r, n − s) verifies too, so one message and key have
/// two valid signature strings. stepsign makes only the low form (s ≤ n/2) and its verifier
/// accepts only that form (SPEC §5.3: one signature, one string). The arithmetic is on the
/// public 32-byte big-endian halves of a raw `r||s` and needs no libcrypto call.
public enum ECDSALowS {
    /// The order n of the P-256 group, big-endian.
    static let order: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
    ]

    /// ⌊n/2⌋, big-endian: the largest low s.
    static let halfOrder: [UInt8] = [
        0x7F, 0xFF, 0xFF, 0xFF, 0x80, 0x00, 0x00, 0x00, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xDE, 0x73, 0x7D, 0x56, 0xD3, 0x8B, 0xCF, 0x42, 0x79, 0xDC, 0xE5, 0x61, 0x7E, 0x31, 0x92, 0xA8,
    ]

    /// True when `raw` is 64 bytes whose s half is at most n/2. Any other length is false.
    public static func isLowS(_ raw: [UInt8]) -> Bool {
        guard raw.count == 2 * ECDSASignature.halfLength else { return false }
        return !isGreater(raw[ECDSASignature.halfLength...], than: halfOrder)
    }

    /// `raw` with s replaced by n − s when s > n/2; unchanged otherwise (and when it is not
    /// 64 bytes). Both forms verify; this one is the one stepsign publishes.
    public static func normalized(_ raw: [UInt8]) -> [UInt8] {
        var raw = raw
        normalize(&raw)
        return raw
    }

    /// Makes `raw` low-S in place: s replaced by n − s when s > n/2 (as ``normalized(_:)``,
    /// without new arrays).
    package static func normalize(_ raw: inout [UInt8]) {
        guard raw.count == 2 * ECDSASignature.halfLength, !isLowS(raw) else { return }
        subtractSFromOrder(&raw)
    }

    /// The high-S twin of `raw`: s replaced by n − s (for tests and attackers' tools; s must
    /// be in 1..<n).
    public static func twin(_ raw: [UInt8]) -> [UInt8] {
        guard raw.count == 2 * ECDSASignature.halfLength else { return raw }
        var raw = raw
        subtractSFromOrder(&raw)
        return raw
    }

    /// Big-endian comparison of two 32-byte numbers: a > b.
    private static func isGreater(_ a: ArraySlice<UInt8>, than b: [UInt8]) -> Bool {
        for (x, y) in zip(a, b) where x != y {
            return x > y
        }
        return false
    }

    /// Replaces the s half of the 64-byte `raw` with n − s (big-endian, s ≤ n).
    private static func subtractSFromOrder(_ raw: inout [UInt8]) {
        let half = ECDSASignature.halfLength
        var borrow = 0
        for index in stride(from: half - 1, through: 0, by: -1) {
            var difference = Int(order[index]) - Int(raw[half + index]) - borrow
            borrow = difference < 0 ? 1 : 0
            if difference < 0 { difference += 256 }
            raw[half + index] = UInt8(difference)
        }
    }
}
