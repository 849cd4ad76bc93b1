import Foundation
import StepSignConfig
@testable import StepSignEngine
import Testing
import StepSignTestSupport

/// Serialized: a test writes its script and then runs it, and a program spawned by another
/// test in between would hold the script open for writing across its fork, so the exec
/// would fail with ETXTBSY ("Text file busy").
@Suite("Command notifier", .serialized)
struct CommandNotifierTests {
    static let code = "7K9M2P3Q"
    static let message = ActivationMessage(user: "alice", verificationKey: "maple-otter", activationCode: code,
                                           expiresAt: Date(timeIntervalSince1970: 1_748_781_296))

    @Test("the program gets the JSON line on stdin")
    func stdin() async throws {
        let temp = try TemporaryDirectory("notifier")
        defer { temp.remove() }
        let script = try temp.script("notify", "cat > '\(temp.path)/stdin'")
        try await CommandNotifier(argv: [script]).deliver(Self.message)
        #expect(try temp.read("stdin") == String(decoding: Self.message.jsonLine, as: UTF8.self))
    }

    @Test("arguments pass verbatim, no shell, and neither argv nor environment holds the code")
    func codeNotInArgvOrEnvironment() async throws {
        let temp = try TemporaryDirectory("notifier")
        defer { temp.remove() }
        let script = try temp.script("notify", """
            cat > /dev/null
            for argument in "$@"; do printf '%s\\n' "$argument"; done > '\(temp.path)/args'
            cat /proc/$$/cmdline > '\(temp.path)/cmdline'
            cat /proc/$$/environ > '\(temp.path)/environ'
            """)
        let arguments = ["a b", "$(touch \(temp.path)/pwned)", ";", "*"]
        try await CommandNotifier(argv: [script] + arguments).deliver(Self.message)
        #expect(try temp.read("args") == arguments.map { $0 + "\n" }.joined())
        #expect(!FileManager.default.fileExists(atPath: temp.path + "/pwned"))
        let cmdline = try temp.read("cmdline")
        #expect(cmdline.contains(script))
        #expect(!cmdline.contains(Self.code))
        let environ = try temp.read("environ")
        #expect(!environ.contains(Self.code))
        #expect(environ.split(separator: "\0").map(String.init).sorted() == ChildProcess.environment.sorted())
    }

    @Test("a non-zero exit is an error naming program and status, not the code or the program's stderr")
    func nonZeroExit() async throws {
        let temp = try TemporaryDirectory("notifier")
        defer { temp.remove() }
        let script = try temp.script("notify", "cat >&2\necho 'failed for 7K9M2P3Q' >&2\nexit 3")
        do {
            try await CommandNotifier(argv: [script]).deliver(Self.message)
            Issue.record("a failing notifier was taken for a delivery")
        } catch let error as CommandNotifierError {
            #expect(error == .exited(program: script, status: 3))
            #expect(!"\(error)".contains(Self.code))
            #expect(!String(reflecting: error).contains(Self.code))
            #expect("\(error)" == "notifier \(script) exited with status 3")
        }
    }

    @Test("a program that runs too long is killed with its process group within the bound")
    func timeout() async throws {
        let temp = try TemporaryDirectory("notifier")
        defer { temp.remove() }
        let script = try temp.script("notify", "sleep 30 &\necho $! > '\(temp.path)/sleeper'\nwait")
        let started = ContinuousClock.now
        await #expect(throws: CommandNotifierError.timedOut(program: script, timeout: .milliseconds(500))) {
            try await CommandNotifier(argv: [script], timeout: .milliseconds(500)).deliver(Self.message)
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(500))
        // Killed, not waited out: well under the sleeper's 30 s. (Not a tighter wall-clock
        // bound: in the parallel suite on two busy cores this task has waited 9 s for a thread.)
        #expect(elapsed < .seconds(20))
        let sleeper = try temp.read("sleeper").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await Self.isGone(pid: sleeper))
    }

    @Test("a program that is not there is a spawn error")
    func missingProgram() async {
        await #expect(throws: CommandNotifierError.spawnFailed(program: "/nonexistent/notify", errno: ENOENT)) {
            try await CommandNotifier(argv: ["/nonexistent/notify"]).deliver(Self.message)
        }
    }

    @Test("a program that ignores stdin and exits 0 has delivered")
    func ignoresInput() async throws {
        try await CommandNotifier(argv: ["/bin/true"]).deliver(Self.message)
    }

    @Test("an empty argv is an error")
    func emptyArgv() async {
        await #expect(throws: CommandNotifierError.noProgram) {
            try await CommandNotifier(argv: []).deliver(Self.message)
        }
    }

    @Test("the factory picks the outbox for an empty notifier, else the command")
    func factory() {
        var config = StepSignConfiguration()
        let outbox = CodeNotifierFactory.make(config: config, stateDirectory: "/var/lib/stepsign")
        #expect((outbox as? OutboxNotifier)?.directory == "/var/lib/stepsign/outbox")
        config.forgotPassword.notifier = ["/usr/local/bin/send-code", "--via", "mail"]
        let command = CodeNotifierFactory.make(config: config, stateDirectory: "/var/lib/stepsign")
        #expect((command as? CommandNotifier)?.argv == ["/usr/local/bin/send-code", "--via", "mail"])
    }

    /// Whether `pid` has ended (gone, or a zombie nobody reaped yet), waiting up to 2 s.
    static func isGone(pid: String) async throws -> Bool {
        for _ in 0..<40 {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
            if let end = stat.lastIndex(of: ")"), stat[stat.index(end, offsetBy: 2)] == "Z" { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }
}
