import ArgumentParser
import StepSignCrypto
#if canImport(Glibc)
import Glibc
#endif

/// `level1`: full level-1 round trips on one connection: authenticateUserAndSignData (→
/// getPassword), then setPassword (scrypt check, counter reset, signature, durable ledger row).
///
/// With --scrypt-n, each round trip is preceded by one bare `PasswordHash.verify` at those
/// parameters in this process (what the daemon runs for the setPassword answer), so the two are
/// measured alternately and the host's changing speed falls on both.
struct Level1Command: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "level1", abstract: "Level-1 round trips with the password.")
    @OptionGroup var target: StepUpTarget
    var socket: String { target.socket }
    var user: String { target.user }
    var passwordFile: String { target.passwordFile }
    @Option(help: "Round trips to make.")
    var iterations = 20
    @Option(help: "Stop after this many seconds.")
    var seconds = 120.0
    @Option(name: .customLong("payload-bytes"), help: "Bytes of payload per request.")
    var payloadBytes = 200
    @Option(name: .customLong("scrypt-n"), help: "Also time a bare scrypt check with this N before each round trip.")
    var scryptN: Int?
    @Option(name: .customLong("scrypt-r"))
    var scryptR = 8
    @Option(name: .customLong("scrypt-p"))
    var scryptP = 1

    func run() throws {
        let clock = RunClock()
        signal(SIGPIPE, SIG_IGN)
        let bareScrypt = try scryptN.map {
            try BareScrypt(parameters: ScryptParameters(n: UInt64($0), r: UInt32(scryptR), p: UInt32(scryptP)))
        }
        var scryptLatencies: [UInt64] = []
        let fd = connectUnix(socket)
        let reader = LineReader(fd: fd)
        let password = Self.firstLine(of: passwordFile)
        let deadline = monotonicNanoseconds() + UInt64(seconds * 1e9)
        var latencies: [UInt64] = []
        var failures = 0
        for i in 0..<iterations where monotonicNanoseconds() < deadline {
            if let bareScrypt { scryptLatencies.append(bareScrypt.timedVerify()) }
            let start = monotonicNanoseconds()
            var request: [UInt8] = Array(#"{"id":\#(2 * i + 1),"op":"authenticateUserAndSignData","user":"\#(user)","payload":""#.utf8)
            request += payload(i, bytes: payloadBytes)
            request += Array(#"","reason":"Benchmark","authLevel":1,"authenticatorType":0}"#.utf8) + [0x0A]
            writeAll(fd, request)
            let challenge = String(decoding: reader.line(), as: UTF8.self)
            guard challenge.contains(#""event":"getPassword""#) else { fail("no password challenge: \(challenge)") }
            writeAll(fd, Array(#"{"id":\#(2 * i + 2),"op":"setPassword","password":"\#(password)","challengeMode":12}"#.utf8) + [0x0A])
            let answer = String(decoding: reader.line(), as: UTF8.self)
            if answer.contains(#""event":"onAuthenticateUserAndSignData""#), answer.contains(#""status":{"code":100"#) {
                latencies.append(monotonicNanoseconds() - start)
            } else {
                failures += 1
                printError("stepsign-loadgen: level-1 signing failed: \(answer.prefix(300))")
            }
        }
        close(fd)
        let sorted = latencies.sorted()
        let mean = sorted.isEmpty ? 0 : Double(sorted.reduce(0, +)) / Double(sorted.count) / 1e6
        let scryptSorted = scryptLatencies.sorted()
        let scryptMean = scryptSorted.isEmpty ? 0 : Double(scryptSorted.reduce(0, +)) / Double(scryptSorted.count) / 1e6
        clock.report([("mode", "level1"), ("completed", "\(sorted.count)"), ("failed", "\(failures)"),
                      ("mean_ms", fmt(mean)), ("p50_ms", fmt(percentile(sorted, 0.5))), ("min_ms", fmt(percentile(sorted, 0))),
                      ("scrypt_completed", "\(scryptSorted.count)"), ("scrypt_mean_ms", fmt(scryptMean)),
                      ("scrypt_p50_ms", fmt(percentile(scryptSorted, 0.5)))])
    }

    /// The first line of `path` (the password; never on the command line).
    static func firstLine(of path: String) -> String {
        guard let file = fopen(path, "r") else { fail("cannot read \(path)") }
        var line = [CChar](repeating: 0, count: 256)
        _ = fgets(&line, Int32(line.count), file)
        fclose(file)
        return String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .split(separator: "\n").first.map(String.init) ?? ""
    }
}

/// Where the level-1 modes sign, and with which password.
struct StepUpTarget: ParsableArguments {
    @Option(help: "The socket path.")
    var socket: String
    @Option(help: "The user to sign for.")
    var user: String
    @Option(name: .customLong("password-file"), help: "A file whose first line is the user's password.")
    var passwordFile: String
}
