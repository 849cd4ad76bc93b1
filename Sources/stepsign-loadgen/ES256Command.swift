import ArgumentParser
import Dispatch
import StepSignCrypto
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `es256`: the bare cost of one ES256 signature in this process, through StepSignCrypto
/// (SHA-256 then EVP_PKEY_sign), on one thread: what the daemon pays per signature before any
/// protocol, engine or ledger work. Compare with `openssl speed ecdsap256`.
///
/// With `--pkcs11-module`, the key is made in that PKCS#11 token instead (SPEC §5.7) and
/// `--threads` sign at once through a pool of `--sessions` sessions: the token's rate, and what
/// the session pool buys. `SOFTHSM2_CONF` and the like come from the environment.
struct ES256Command: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "es256", abstract: "In-process ES256 signatures, one thread.")
    @Option(help: "Sign for this many seconds.")
    var seconds = 3.0
    @Option(name: .customLong("payload-bytes"), help: "Bytes of the message signed.")
    var payloadBytes = 300
    @Option(name: .customLong("pkcs11-module"), help: "Sign with a key made in this PKCS#11 module's token.")
    var pkcs11Module: String?
    @Option(name: .customLong("token-label"), help: "The token's label (\"\": the first token).")
    var tokenLabel = ""
    @Option(name: .customLong("pin-file"), help: "A file holding the token's user PIN.")
    var pinFile: String?
    @Option(help: "Sessions the token's pool may open.")
    var sessions = 1
    @Option(help: "Threads signing at once.")
    var threads = 1

    func run() throws {
        let key: P256PrivateKey
        var mode = "es256"
        if let pkcs11Module {
            guard let pinFile, let text = try? String(contentsOfFile: pinFile, encoding: .utf8) else {
                throw ValidationError("--pkcs11-module needs a readable --pin-file")
            }
            let pin = Array(text.split(separator: "\n").first.map(String.init)?.utf8 ?? "".utf8)
            let token = try PKCS11Token(modulePath: pkcs11Module, label: tokenLabel, pin: pin, maxSessions: sessions)
            key = try token.generateP256Key(id: try SecureRandom.bytes(count: 16), label: "stepsign bench")
            mode = "es256-pkcs11"
        } else {
            key = try P256PrivateKey.generate()
        }
        let message = payload(0, bytes: payloadBytes)
        let clock = RunClock()  // after the token is opened and its key made
        let deadline = monotonicNanoseconds() + UInt64(seconds * 1e9)
        let total = Mutex(0)
        let failed = Mutex(false)
        DispatchQueue.concurrentPerform(iterations: max(1, threads)) { _ in
            var count = 0
            while monotonicNanoseconds() < deadline {
                for _ in 0..<20 {
                    if (try? key.signatureES256(for: message)) == nil { failed.withLock { $0 = true } }
                }
                count += 20
            }
            total.withLock { $0 += count }
        }
        if failed.withLock({ $0 }) { throw ValidationError("a signature failed") }
        let count = total.withLock { $0 }
        let elapsed = Double(monotonicNanoseconds() - clock.wallStart) / 1e9
        clock.report([("mode", mode), ("threads", "\(threads)"), ("sessions", "\(sessions)"), ("completed", "\(count)"),
                      ("sign_per_s", fmt(Double(count) / elapsed, 1))])
    }
}
