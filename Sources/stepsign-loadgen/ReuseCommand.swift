import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// `reuse`: the cost of a reused step-up (SPEC §3.4) against a level-0 request, on one
/// connection: one level-1 step-up with the password opens the window, then level-1 requests
/// that reuse it alternate with level-0 requests, one at a time, so that the host's changing
/// speed falls on both. The daemon needs `[stepup] reuse_seconds` and `reuse_max_uses` at
/// least `--iterations`, and `signing.allow_level_0`.
struct ReuseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "reuse",
                                                    abstract: "Reused level-1 requests against level-0 ones, alternating.")
    @OptionGroup var target: StepUpTarget
    @Option(help: "Reused requests (and as many level-0 ones).")
    var iterations = 2000
    @Option(name: .customLong("payload-bytes"), help: "Bytes of payload per request.")
    var payloadBytes = 200

    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        let fd = connectUnix(target.socket)
        let reader = LineReader(fd: fd)
        let password = Level1Command.firstLine(of: target.passwordFile)
        let user = target.user
        var id = 0
        func request(level: Int, _ serial: Int) -> String {
            id += 1
            var line: [UInt8] = Array(#"{"id":\#(id),"op":"authenticateUserAndSignData","user":"\#(user)","payload":""#.utf8)
            line += payload(serial, bytes: payloadBytes)
            line += Array(#"","reason":"Benchmark","authLevel":\#(level),"authenticatorType":0}"#.utf8) + [0x0A]
            writeAll(fd, line)
            return String(decoding: reader.line(), as: UTF8.self)
        }
        let challenge = request(level: 1, 0)
        guard challenge.contains(#""event":"getPassword""#) else { fail("no password challenge: \(challenge.prefix(200))") }
        writeAll(fd, Array(#"{"id":0,"op":"setPassword","password":"\#(password)","challengeMode":12}"#.utf8) + [0x0A])
        let opened = String(decoding: reader.line(), as: UTF8.self)
        guard opened.contains(#""status":{"code":100"#) else { fail("the step-up did not sign: \(opened.prefix(200))") }
        let clock = RunClock()
        var reused: [UInt64] = [], levelZero: [UInt64] = []
        var failures = 0
        for i in 1...iterations {
            var start = monotonicNanoseconds()
            let answer = request(level: 1, i)
            if answer.contains(#""reusedFrom""#), answer.contains(#""status":{"code":100"#) {
                reused.append(monotonicNanoseconds() - start)
            } else {
                failures += 1
                if failures == 1 { printError("stepsign-loadgen: not reused: \(answer.prefix(300))") }
            }
            start = monotonicNanoseconds()
            let zero = request(level: 0, i)
            if zero.contains(#""status":{"code":100"#) { levelZero.append(monotonicNanoseconds() - start) } else { failures += 1 }
        }
        close(fd)
        reused.sort()
        levelZero.sort()
        let ratio = percentile(levelZero, 0.5) > 0 ? percentile(reused, 0.5) / percentile(levelZero, 0.5) : 0
        clock.report([("mode", "reuse"), ("reused", "\(reused.count)"), ("level0", "\(levelZero.count)"), ("failed", "\(failures)"),
                      ("reused_p50_ms", fmt(percentile(reused, 0.5), 4)), ("level0_p50_ms", fmt(percentile(levelZero, 0.5), 4)),
                      ("reused_p99_ms", fmt(percentile(reused, 0.99), 4)), ("level0_p99_ms", fmt(percentile(levelZero, 0.99), 4)),
                      ("ratio_p50", fmt(ratio, 3))])
    }
}
