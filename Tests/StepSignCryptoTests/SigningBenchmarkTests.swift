import Foundation
import StepSignCrypto
import Testing

/// Throughput of ES256 signing and verification, to compare with `openssl speed ecdsap256`.
/// Off by default; run with `STEPSIGN_BENCH=1 swift test -c release --filter SigningBenchmark`.
@Suite("Signing benchmark", .enabled(if: ProcessInfo.processInfo.environment["STEPSIGN_BENCH"] != nil))
struct SigningBenchmarkTests {
    @Test("ES256 signs and verifies per second on one core")
    func throughput() throws {
        let key = try P256PrivateKey.generate()
        let message = Array(repeating: UInt8(ascii: "a"), count: 300)
        let count = 5000
        var start = ContinuousClock.now
        var signature: [UInt8] = []
        for _ in 0..<count { signature = try key.signatureES256(for: message) }
        let signing = ContinuousClock.now - start
        start = ContinuousClock.now
        for _ in 0..<count { _ = key.publicKey.isValidSignatureES256(signature, for: message) }
        let verifying = ContinuousClock.now - start
        let rate = { (d: Duration) in Double(count) / (Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18) }
        print("ES256: \(Int(rate(signing))) signs/s, \(Int(rate(verifying))) verifies/s")
    }
}
