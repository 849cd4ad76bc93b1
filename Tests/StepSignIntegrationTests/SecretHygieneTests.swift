import Foundation
import StepSignClient
import StepSignTestSupport
import Testing

/// Logs (SPEC §7): structured lines on stderr, one audit line per signature, and never a
/// password, activation code or private key — in the log or in any process's argv.
@Suite("Logs and secret hygiene", .blocking)
struct SecretHygieneTests {
    /// Passwords no other test uses, so finding one anywhere can only come from this test.
    enum Secret {
        static let initial = "Vivid-Marmot-58"
        static let wrong = "Gloomy-Walrus-36"
        static let afterExpiry = "Hardy-Pika-47"
        static let afterForgot = "Nimble-Ibex-29"
        static let afterUpdate = "Quirky-Tapir-64"
        static let all = [initial, wrong, afterExpiry, afterForgot, afterUpdate]
    }

    @Test("each signature has one audit line naming user, signature ID, kid and the peer's uid, pid and comm")
    func auditLine() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        let kid = try #require(try connection.call("status").result?["activeKid"]?.stringValue)
        let reply = try connection.signWithPassword(user: DaemonHarness.user, password: DaemonHarness.password)
        let details = try #require(reply.event("onAuthenticateUserAndSignData")?["details"])
        let signatureID = try #require(details["dataSignatureID"]?.stringValue)

        let lines = daemon.logLines(message: "signed")
        #expect(lines.count == 1)
        let fields = logfmtFields(try #require(lines.first))
        let comm = try String(contentsOfFile: "/proc/self/comm", encoding: .utf8).trimmingCharacters(in: .newlines)
        #expect(fields["level"] == "notice")
        #expect(fields["user"] == DaemonHarness.user)
        #expect(fields["signatureID"] == signatureID)
        #expect(fields["kid"] == kid)
        #expect(fields["authLevel"] == "1")
        #expect(fields["authenticatorUsed"] == "password")
        #expect(fields["peerUID"] == String(getuid()))
        #expect(fields["peerPID"] == String(getpid()))
        #expect(fields["peerComm"] == comm)
        #expect(fields["ts"]?.hasSuffix("Z") == true)
    }

    @Test("level-0 signatures: one debug line each, and one info line counting them by peer when the daemon stops")
    func levelZeroSummary() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        for index in 0..<3 {
            #expect(try connection.call("authenticateUserAndSignData", [
                "user": DaemonHarness.user, "payload": "p\(index)", "reason": "r", "authLevel": 0, "authenticatorType": 0,
            ]).statusCode(of: "onAuthenticateUserAndSignData") == 100)
        }
        #expect(daemon.stop() == 0)
        let perSignature = daemon.logLines(message: "signed").map(logfmtFields)
        #expect(perSignature.count == 3 && perSignature.allSatisfy { $0["level"] == "debug" })
        let summaries = daemon.logLines(message: "signed at level 0").map(logfmtFields)
        let comm = try String(contentsOfFile: "/proc/self/comm", encoding: .utf8).trimmingCharacters(in: .newlines)
        #expect(summaries.count == 1)
        #expect(summaries.first?["level"] == "info")
        #expect(summaries.first?["signatures"] == "3")
        #expect(summaries.first?["peers"] == "\(getuid())/\(comm)=3")
    }

    @Test("after every flow, no password, activation code or private key is in the log or any process's argv")
    func noSecretsAnywhere() throws {
        let daemon = try DaemonHarness()
        let admin = try daemon.connect()
        try daemon.addUser(password: Secret.initial)

        // Level 0 and level 1 signing, a wrong answer first.
        let levelZero = try admin.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "p0", "reason": "r", "authLevel": 0, "authenticatorType": 0,
        ])
        #expect(levelZero.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        let signing = try daemon.connect()
        #expect(try signing.signWithPassword(user: "alice", password: Secret.wrong).statusCode(of: "getPassword") == 102)
        #expect(try signing.setPassword(Secret.initial, mode: 12).statusCode(of: "onAuthenticateUserAndSignData") == 100)

        // Login: wrong, then right.
        let login = try daemon.connect()
        #expect(try login.login(password: Secret.wrong).statusCode(of: "getPassword") == 102)
        #expect(try login.setPassword(Secret.initial, mode: 0).eventNames == ["onUserLoggedIn"])

        // Expiry (mode 4).
        let expiry = try daemon.connect()
        #expect(try expiry.loginExpired(daemon, password: Secret.initial).int("challengeMode", of: "getPassword") == 4)
        #expect(try expiry.updatePassword(current: Secret.initial, new: Secret.afterExpiry, mode: 4).eventNames == ["onUserLoggedIn"])

        // Forgot password with the outbox code (mode 1).
        let forgot = try daemon.connect()
        #expect(try forgot.recoverWithActivationCode(daemon).int("challengeMode", of: "getPassword") == 1)
        #expect(try forgot.setPassword(Secret.afterForgot, mode: 1).eventNames == ["onUserLoggedIn"])

        // User-initiated update (mode 2).
        let update = try daemon.connect()
        #expect(try update.startUpdate(password: Secret.afterForgot).int("challengeMode", of: "getPassword") == 2)
        #expect(try update.updatePassword(current: Secret.afterForgot, new: Secret.afterUpdate, mode: 2)
            .statusCode(of: "onUpdateCredentialResponse") == 100)

        let codes = daemon.outbox().compactMap { $0["activationCode"]?.stringValue }
        #expect(!codes.isEmpty)
        let keyLines = try privateKeyLines(stateDirectory: daemon.stateDirectory)
        #expect(!keyLines.isEmpty)
        let secrets = Secret.all + codes + keyLines

        let log = daemon.log
        #expect(log.contains("msg=signed"), "the log was written")
        for secret in secrets {
            #expect(!log.contains(secret), "a secret is in the daemon's log")
        }
        let ps = try Tools.run(["ps", "-eo", "args"]).stdout
        let cmdlines = allCommandLines()
        #expect(cmdlines.contains { $0.contains("stepsignd") }, "the daemon's argv was read")
        for secret in secrets {
            #expect(!ps.contains(secret), "a secret is in ps -eo args")
            #expect(!cmdlines.contains { $0.contains(secret) }, "a secret is in a /proc/*/cmdline")
        }
    }

    /// The base64 lines of every key file's PEM body.
    private func privateKeyLines(stateDirectory: String) throws -> [String] {
        let keys = stateDirectory + "/keys"
        return try FileManager.default.contentsOfDirectory(atPath: keys).filter { $0.hasSuffix(".pem") }.flatMap { name in
            try String(contentsOfFile: keys + "/" + name, encoding: .utf8)
                .split(separator: "\n").filter { !$0.hasPrefix("-----") && $0.count >= 16 }.map(String.init)
        }
    }

    /// Every process's argv, NUL separators as spaces.
    private func allCommandLines() -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { $0.allSatisfy(\.isNumber) }.compactMap { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
            return String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
        }
    }
}
