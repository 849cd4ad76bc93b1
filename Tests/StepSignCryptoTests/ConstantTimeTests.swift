import StepSignCrypto
import Testing

@Suite("ConstantTime")
struct ConstantTimeTests {
    @Test("equal bytes compare equal")
    func equalBytes() {
        #expect(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        #expect(ConstantTime.equals([], []))
    }

    @Test("a difference in any byte compares unequal")
    func differentBytes() {
        for index in 0..<4 {
            var other: [UInt8] = [9, 9, 9, 9]
            other[index] = 8
            #expect(!ConstantTime.equals([9, 9, 9, 9], other))
        }
    }

    @Test("different lengths compare unequal")
    func differentLengths() {
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2]))
        #expect(!ConstantTime.equals([], [0]))
    }

    /// What this shows, and what it does not. A plain `==` gives the same answers as
    /// `ConstantTime.equals` for every input, so no check of answers can tell them apart; they
    /// differ only in time, and a unit test cannot prove a comparison constant-time by timing
    /// it (timer resolution, noise, a CPU shared with other tests). Counting instructions
    /// (`perf_event_open`) would be deterministic, but the test hosts are virtual machines
    /// without hardware counters.
    ///
    /// What timing does show, robustly, is whether the comparison stops at the first
    /// difference. Over 256 KiB, a comparison that stops there (`==`, `memcmp`, any loop that
    /// breaks early) is thousands of times faster for inputs that differ in their first byte
    /// than for equal ones; one that reads every byte takes the same time for both. The test
    /// compares the medians of interleaved runs and allows a factor of two, so noise does not
    /// fail it and an early exit cannot pass it. It says nothing about smaller, data-dependent
    /// differences (a branch per byte, a difference of a few cycles): for those, the comparison
    /// relies on `CRYPTO_memcmp`, which OpenSSL writes to be free of them.
    @Test("the time does not depend on where the first difference is: the comparison never stops early")
    func noEarlyExit() {
        let size = 256 * 1024
        let secret = [UInt8](repeating: 0x5A, count: size)
        let equal = [UInt8](repeating: 0x5A, count: size)   // its own buffer: no shortcut for shared storage
        var first = equal
        first[0] ^= 0x01
        var last = equal
        last[size - 1] ^= 0x80
        let candidates = [equal, first, last]
        #expect(ConstantTime.equals(secret, equal) && !ConstantTime.equals(secret, first) && !ConstantTime.equals(secret, last))

        let clock = ContinuousClock()
        var samples: [[Duration]] = [[], [], []]
        var equalAnswers = 0
        for round in 0..<41 {
            // Interleaved, in a rotating order, so that a slow moment hits every kind alike.
            for step in 0..<3 {
                let kind = (round + step) % 3
                var answer = false
                samples[kind].append(clock.measure { answer = ConstantTime.equals(secret, candidates[kind]) })
                if answer { equalAnswers += 1 }
            }
        }
        #expect(equalAnswers == 41)

        func median(_ values: [Duration]) -> Double {
            let sorted = values.sorted()
            let middle = sorted[sorted.count / 2]
            return Double(middle.components.seconds) + Double(middle.components.attoseconds) * 1e-18
        }
        let equalTime = median(samples[0])
        for (kind, name) in [(1, "first"), (2, "last")] {
            let ratio = median(samples[kind]) / equalTime
            #expect((0.5...2.0).contains(ratio),
                    "differing in the \(name) byte took \(ratio) times as long as equal (median \(equalTime * 1e6) µs when equal)")
        }
    }
}
