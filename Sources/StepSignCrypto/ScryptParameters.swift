/// scrypt's cost parameters (RFC 7914): CPU/memory cost `n` (a power of two > 1), block size
/// `r`, parallelism `p`. Memory used is about 128 · n · r bytes.
public struct ScryptParameters: Sendable, Hashable {
    /// CPU/memory cost; a power of two greater than 1.
    public var n: UInt64
    /// Block size.
    public var r: UInt32
    /// Parallelism.
    public var p: UInt32

    /// stepsign's default: n = 2^15, r = 8, p = 1 (32 MiB, tens of milliseconds).
    public static let `default` = ScryptParameters(n: 32768, r: 8, p: 1)

    /// Parameters with the given values.
    public init(n: UInt64, r: UInt32, p: UInt32) {
        self.n = n
        self.r = r
        self.p = p
    }

    /// log2(n) when `n` is a power of two greater than 1, else nil.
    public var logN: Int? {
        n > 1 && n & (n - 1) == 0 ? n.trailingZeroBitCount : nil
    }

    /// Roughly the bytes scrypt allocates: 128·r·(n + p + 2), nil if that overflows.
    var memoryBytes: UInt64? {
        let (np, o1) = n.addingReportingOverflow(UInt64(p) + 2)
        let (blocks, o2) = np.multipliedReportingOverflow(by: 128 * UInt64(r))
        return o1 || o2 ? nil : blocks
    }
}
