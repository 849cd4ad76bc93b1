import StepSignCrypto
import Testing

@Suite("A UUID's bits from its canonical text")
struct UUIDBitsTests {
    @Test("the 32 hex digits of canonical lowercase text, in order")
    func parses() throws {
        let bits = try #require(UUIDBits(canonical: "01234567-89ab-cdef-fedc-ba9876543210"))
        #expect(bits.high == 0x0123_4567_89ab_cdef)
        #expect(bits.low == 0xfedc_ba98_7654_3210)
    }

    @Test("anything else is not a UUID", arguments: [
        "", "01234567-89AB-cdef-0123-456789abcdef", "0123456789abcdef0123456789abcdef",
        "01234567-89ab-cdef-0123-456789abcde", "01234567-89ab-cdef-0123-456789abcdef0",
        "01234567_89ab-cdef-0123-456789abcdef", "0123456g-89ab-cdef-0123-456789abcdef",
        "01234567-89ab-cdef-0123-456789abcdeé",
    ])
    func refuses(_ text: String) {
        #expect(UUIDBits(canonical: text) == nil)
    }

    @Test("distinct IDs made in one millisecond have distinct bits")
    func distinct() throws {
        let ids = try (0..<1000).map { _ in try UUIDv7.generate(unixMilliseconds: 1_700_000_000_000) }
        let bits = Set(ids.compactMap { UUIDBits(canonical: $0) })
        #expect(bits.count == ids.count)
    }
}
