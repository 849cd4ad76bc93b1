import StepSignCrypto

/// The bare cost of one password check: `PasswordHash.verify` in this process, which is what
/// the daemon runs for a `setPassword` answer.
struct BareScrypt {
    private static let password = "Bench-Password-123"
    private let encoded: String

    init(parameters: ScryptParameters) throws {
        encoded = try PasswordHash.make(password: Self.password, parameters: parameters)
    }

    /// One verification's wall time in nanoseconds.
    func timedVerify() -> UInt64 {
        let start = monotonicNanoseconds()
        guard (try? PasswordHash.verify(password: Self.password, encoded: encoded)) == true else { fail("scrypt mismatch") }
        return monotonicNanoseconds() - start
    }
}
