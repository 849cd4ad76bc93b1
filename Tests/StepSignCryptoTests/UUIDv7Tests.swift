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

    @Test("20,000 IDs made by two tasks at once, across many refills of the random page, are distinct, and each random bit varies")
    func manyIDsFromTwoTasks() async throws {
        let halves = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<2 {
                group.addTask { try (0..<10_000).map { _ in try UUIDv7.generate(unixMilliseconds: 42) } }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let ids = halves.flatMap { $0 }
        #expect(Set(ids).count == 20_000)
        // Each of the 74 random bits (hex digits 13-35 less the version and variant bits) is
        // both 0 and 1 somewhere: no byte of the page is stuck or handed out unfilled.
        let hex = ids.map { Array($0.replacingOccurrences(of: "-", with: "").utf8) }
        var ones = [Int](repeating: 0, count: 128)
        for digits in hex {
            for (index, digit) in digits.enumerated() {
                let nibble = Int(digit >= UInt8(ascii: "a") ? digit - UInt8(ascii: "a") + 10 : digit - UInt8(ascii: "0"))
                for bit in 0..<4 where nibble & (8 >> bit) != 0 { ones[index * 4 + bit] += 1 }
            }
        }
        for bit in Array(52..<64) + Array(66..<128) { #expect(ones[bit] > 0 && ones[bit] < ids.count, "bit \(bit)") }
        #expect(ones[48] == 0 && ones[49] == ids.count && ones[50] == ids.count && ones[51] == ids.count) // version 0111
        #expect(ones[64] == ids.count && ones[65] == 0) // variant 10
    }
}
