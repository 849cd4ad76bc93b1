import ArgumentParser
import Foundation
import StepSignCrypto
import StepSignFormat

/// `verify-proofs`: the cost of checking one signature with its proof offline, in this process,
/// with the verifier's own code: the tlog-proof read, its checkpoint's log signature, the path
/// from the JWS's leaf to the root, then the JWS against the keys (what `stepsign-verify --proof`
/// does after reading its files). The directory holds `N.jws` and `N.tlog-proof` pairs
/// (`scripts/bench-proofs` writes them).
struct VerifyProofsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "verify-proofs",
                                                    abstract: "In-process offline checks of signatures with their proofs.")
    @Option(help: "A directory of N.jws and N.tlog-proof files.")
    var directory: String
    @Option(help: "The JWKS the signatures verify with.")
    var keys: String
    @Option(name: .customLong("log-keys"), help: "A file of log keys, one a line.")
    var logKeys: String
    @Option(help: "Check every pair this many times.")
    var rounds = 20

    func run() throws {
        let trusted = try TrustedKeys(parsing: try String(contentsOfFile: keys, encoding: .utf8))
        let logKeyList = try String(contentsOfFile: logKeys, encoding: .utf8).split(separator: "\n")
            .map { try NoteVerifierKey(String($0)) }
        var pairs: [(jws: String, proof: String)] = []
        for number in 0... {
            let base = directory + "/\(number)"
            guard let jws = try? String(contentsOfFile: base + ".jws", encoding: .utf8),
                  let proof = try? String(contentsOfFile: base + ".tlog-proof", encoding: .utf8) else { break }
            pairs.append((jws.trimmingCharacters(in: .whitespacesAndNewlines), proof))
        }
        guard !pairs.isEmpty else { throw ValidationError("no N.jws and N.tlog-proof pairs in \(directory)") }
        let clock = RunClock()
        var latencies: [UInt64] = []
        latencies.reserveCapacity(pairs.count * rounds)
        for _ in 0..<rounds {
            for pair in pairs {
                let start = monotonicNanoseconds()
                let proof = try TlogProof(parsing: pair.proof)
                _ = try proof.verify(leaf: Array(pair.jws.utf8), logKeys: logKeyList)
                _ = try StepSignSignature.verify(pair.jws, trustedKeys: trusted, logIndex: proof.index)
                latencies.append(monotonicNanoseconds() - start)
            }
        }
        latencies.sort()
        clock.report([("mode", "verify-proofs"), ("completed", "\(latencies.count)"), ("pairs", "\(pairs.count)"),
                      ("p50_ms", fmt(percentile(latencies, 0.5), 4)), ("p99_ms", fmt(percentile(latencies, 0.99), 4))])
    }
}
