import ArgumentParser
import StepSignCrypto

/// `es256`: the bare cost of one ES256 signature in this process, through StepSignCrypto
/// (SHA-256 then EVP_PKEY_sign), on one thread: what the daemon pays per signature before any
/// protocol, engine or ledger work. Compare with `openssl speed ecdsap256`.
struct ES256Command: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "es256", abstract: "In-process ES256 signatures, one thread.")
    @Option(help: "Sign for this many seconds.")
    var seconds = 3.0
    @Option(name: .customLong("payload-bytes"), help: "Bytes of the message signed.")
    var payloadBytes = 300

    func run() throws {
        let clock = RunClock()
        let key = try P256PrivateKey.generate()
        let message = payload(0, bytes: payloadBytes)
        let deadline = monotonicNanoseconds() + UInt64(seconds * 1e9)
        var count = 0
        while monotonicNanoseconds() < deadline {
            for _ in 0..<100 { _ = try key.signatureES256(for: message) }
            count += 100
        }
        let elapsed = Double(monotonicNanoseconds() - clock.wallStart) / 1e9
        clock.report([("mode", "es256"), ("completed", "\(count)"), ("sign_per_s", fmt(Double(count) / elapsed, 1))])
    }
}
