/// A UUID's 128 bits, read from its lowercase canonical text (8-4-4-4-12 hex digits, as
/// ``UUIDv7`` writes signature IDs). Sets of signature IDs keep these 16 bytes, not strings:
/// no heap string per ID, and hashing 16 bytes rather than 36.
package struct UUIDBits: Hashable, Sendable {
    package var high: UInt64
    package var low: UInt64

    /// The bits of `text`, or nil when it is not a lowercase canonical UUID.
    package init?(canonical text: String) {
        let utf8 = text.utf8
        guard utf8.count == 36 else { return nil }
        var high: UInt64 = 0, low: UInt64 = 0, digits = 0
        for (index, byte) in utf8.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            let value: UInt64
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt64(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = UInt64(byte - UInt8(ascii: "a") + 10)
            default: return nil
            }
            if digits < 16 { high = high << 4 | value } else { low = low << 4 | value }
            digits += 1
        }
        self.high = high
        self.low = low
    }
}
