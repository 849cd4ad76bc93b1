@testable import StepSignProtocol
import Testing
import struct Foundation.Date

/// SPEC §5.1 "Bounded work per request": parsing a request line is linear in its length,
/// whatever its shape, and a duplicate member is refused however many members come first.
@Suite("JSON parser: duplicate members and cost")
struct JSONParserCostTests {
    /// A short distinct member name for `index`: base 36 in digits and capitals, 1 to 3
    /// characters (never `id` or `op`).
    private static func name(_ index: Int) -> String {
        let digits = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        var n = index
        var out = ""
        repeat {
            out.append(digits[n % 36])
            n /= 36
        } while n > 0
        return out
    }

    /// `{"id":1,"op":"status","<name>":0,...}` with `count` distinct members after `op`.
    private static func manyMembers(_ count: Int) -> [UInt8] {
        var text = #"{"id":1,"op":"status""#
        for index in 0..<count { text += #","\#(name(index))":0"# }
        return Array((text + "}").utf8)
    }

    /// An object of `count` members named `m0`, `m1`, …, where member `position` (0-based)
    /// repeats the name of member `original`, written as `spelling` when given.
    private static func duplicate(count: Int, position: Int, original: Int, spelling: String? = nil) -> [UInt8] {
        let names = (0..<count).map { $0 == position ? (spelling ?? "m\(original)") : "m\($0)" }
        return Array(("{" + names.map { #""\#($0)":0"# }.joined(separator: ",") + "}").utf8)
    }

    @Test("a duplicate member is refused wherever it falls, before and after the parser switches to a set",
          arguments: [(3, 2, 0), (3, 2, 1), (9, 7, 0), (9, 8, 0), (9, 8, 7), (10, 9, 3), (5000, 4999, 2),
                      (5000, 4999, 4000), (5000, 2, 1), (8000, 7999, 7998)])
    func duplicateAnywhere(count: Int, position: Int, original: Int) throws {
        let line = Self.duplicate(count: count, position: position, original: original)
        do {
            _ = try JSONParser.parse(line)
            Issue.record("a duplicate of member \(original) at member \(position) of \(count) was accepted")
        } catch {
            #expect(error.reason == "duplicate member \"m\(original)\"")
            let prefix = Array(line[..<error.offset])
            #expect(prefix.filter { $0 == UInt8(ascii: ",") }.count == position, "the offset points at the duplicate")
        }
    }

    @Test("without a duplicate, thousands of members parse, in order")
    func thousandsOfDistinctMembers() throws {
        let value = try JSONParser.parse(Self.manyMembers(8000))
        guard case let .object(members) = value else { Issue.record("not an object"); return }
        #expect(members.count == 8002)
        #expect(members[2].0 == Self.name(0) && members[8001].0 == Self.name(7999))
    }

    @Test("names equal as Strings are duplicates in the set as in the scan: escapes and canonical equivalence",
          arguments: [3, 5000])
    func equivalentSpellings(count: Int) throws {
        // "m1" written with an escape, and "é" composed (U+00E9) against decomposed (e + U+0301).
        for (first, second) in [("m1", #"\u006d1"#), ("\u{E9}", "e\u{301}")] {
            var names = (0..<count).map { "m\($0)" }
            names[1] = first
            names[count - 1] = second
            let line = Array(("{" + names.map { #""\#($0)":0"# }.joined(separator: ",") + "}").utf8)
            #expect(throws: JSONParser.Error.self) { try JSONParser.parse(line) }
        }
    }

    /// The best of `runs` timings of parsing each of `first` and `second`, in seconds, the two
    /// measured in turn, so that a busy machine slows both alike (measured one after the
    /// other, a build running beside them made one side 3 times slower than the other).
    private static func bestTimes(_ first: [UInt8], _ second: [UInt8], runs: Int = 9) throws -> (Double, Double) {
        var best = (Double.infinity, Double.infinity)
        for _ in 0..<runs {
            best.0 = min(best.0, try time(first))
            best.1 = min(best.1, try time(second))
        }
        return best
    }

    private static func time(_ line: [UInt8]) throws -> Double {
        let start = ContinuousClock.now
        _ = try JSONParser.parse(line)
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }

    @Test("a 64 KiB line of 8000 members costs a bounded multiple of a 64 KiB string, not quadratically more")
    func manyMembersCostLikeAnyLine() throws {
        let members = Self.manyMembers(8000)
        let string = Array((#"{"id":1,"op":"status","x":""# + String(repeating: "a", count: 65_400) + #""}"#).utf8)
        #expect(members.count > 60_000 && members.count <= 65_536 && string.count <= 65_536)
        let (many, one) = try Self.bestTimes(members, string)
        // Measured (debug build): linear code about 15-20× (a member is a String, a value and a
        // set insertion; a 64 KiB array of small numbers costs more still); comparing each name
        // with every earlier one: about 3000×.
        #expect(many < one * 50, "8000 members: \(many * 1e3) ms; one string: \(one * 1e3) ms")
    }

    /// Eight times the members: linear code costs about 8 times as much, quadratic code 64
    /// times. The bound sits between with room for a busy machine (a bound of 8 over a factor
    /// of 4 failed under load).
    @Test("eight times the members cost about eight times as much, not sixty-four")
    func membersScaleLinearly() throws {
        let (small, large) = try Self.bestTimes(Self.manyMembers(1000), Self.manyMembers(8000), runs: 11)
        #expect(large < small * 24, "1000 members: \(small * 1e3) ms; 8000 members: \(large * 1e3) ms")
    }
}
