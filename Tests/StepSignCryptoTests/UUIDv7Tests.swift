import StepSignCrypto
import Testing

@Suite("UUIDv7 (RFC 9562 §5.7)")
struct UUIDv7Tests {
    @Test("is lowercase canonical text with version 7 and variant 10")
    func formatIsCanonical() throws {
        for _ in 0..<200 {
            let id = try UUIDv7.generate(unixMilliseconds: 1_700_000_000_123)
            let chars = Array(id)
            #expect(chars.count == 36)
            for (index, char) in chars.enumerated() {
                if [8, 13, 18, 23].contains(index) {
                    #expect(char == "-")
                } else {
                    #expect("0123456789abcdef".contains(char), "\(id)")
                }
            }
            #expect(chars[14] == "7")
            #expect("89ab".contains(chars[19]))
        }
    }

    @Test("the first 48 bits are the milliseconds given")
    func timePrefixIsTheMilliseconds() throws {
        let ms: UInt64 = 0x0123_4567_89ab
        let id = try UUIDv7.generate(unixMilliseconds: ms)
        #expect(id.hasPrefix("01234567-89ab-7"))
    }

    @Test("IDs sort by the milliseconds given")
    func sortsByTime() throws {
        var previous = ""
        for ms in stride(from: UInt64(1_700_000_000_000), to: 1_700_000_000_000 + 5000, by: 97) {
            let id = try UUIDv7.generate(unixMilliseconds: ms)
            #expect(id > previous)
            previous = id
        }
    }

    @Test("IDs in the same millisecond differ")
    func randomBitsDiffer() throws {
        var seen = Set<String>()
        for _ in 0..<1000 { seen.insert(try UUIDv7.generate(unixMilliseconds: 42)) }
        #expect(seen.count == 1000)
    }
}
