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
}
