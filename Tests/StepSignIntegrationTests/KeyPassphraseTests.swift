import Foundation
import StepSignClient
import Testing

/// Signing keys at rest (SPEC §2): encrypted with the passphrase of the systemd credential
/// `stepsign-key-passphrase`, read from `$CREDENTIALS_DIRECTORY`.
@Suite("key passphrase credential", .blocking)
struct KeyPassphraseTests {
    static let passphrase = "Plum-Orbit-Lantern-8"

    /// A daemon (not started) whose `CREDENTIALS_DIRECTORY` holds `passphrase`, if any.
    private static func daemon(passphrase: String?) throws -> DaemonHarness {
        let daemon = try DaemonHarness(start: false)
        let credentials = daemon.directory.appendingPathComponent("credentials")
        try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
        if let passphrase { try writeCredential(passphrase, in: daemon) }
        daemon.environment = ["CREDENTIALS_DIRECTORY": credentials.path]
        return daemon
    }

    private static func writeCredential(_ passphrase: String, in daemon: DaemonHarness) throws {
        let path = daemon.directory.appendingPathComponent("credentials/stepsign-key-passphrase").path
        try (passphrase + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    private static func keyFiles(_ daemon: DaemonHarness) throws -> [String: String] {
        let directory = daemon.stateDirectory + "/keys"
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name.hasSuffix(".pem") {
            files[directory + "/" + name] = try String(contentsOfFile: directory + "/" + name, encoding: .utf8)
        }
        return files
    }

    /// Starts `daemon` expecting it to fail; returns its exit status and log.
    private static func failedStart(_ daemon: DaemonHarness, sourceLocation: SourceLocation = #_sourceLocation) -> (Int32, String)? {
        do {
            try daemon.start()
        } catch let HarnessError.exited(status, log) {
            return (status, log)
        } catch {
            Issue.record("unexpected: \(error)", sourceLocation: sourceLocation)
            return nil
        }
        Issue.record("stepsignd started", sourceLocation: sourceLocation)
        return nil
    }

    @Test("with the credential, key files are ENCRYPTED PRIVATE KEY, and after a restart the daemon signs")
    func encryptedKeysLoadAfterRestart() throws {
        let daemon = try Self.daemon(passphrase: Self.passphrase)
        try daemon.start()
        try daemon.addUser()
        #expect(try daemon.connect().call("admin.rotateKey").code == 0)
        let files = try Self.keyFiles(daemon)
        #expect(files.count == 2)
        for (path, pem) in files {
            #expect(pem.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"), "\(path)")
        }
        #expect(daemon.stop() == 0)

        try daemon.start()
        let reply = try daemon.connect().signWithPassword(user: DaemonHarness.user, password: DaemonHarness.password)
        #expect(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100, "\(reply.code) \(reply.message)")
        #expect(!daemon.log.contains(Self.passphrase), "the passphrase is never logged")
    }

    @Test("a wrong passphrase stops the daemon non-zero, naming the key file and not the passphrase")
    func wrongPassphrase() throws {
        let daemon = try Self.daemon(passphrase: Self.passphrase)
        try daemon.start()
        let keyFile = try #require(try Self.keyFiles(daemon).keys.first)
        #expect(daemon.stop() == 0)

        let wrong = "Wrong-Orbit-Lantern-9"
        try Self.writeCredential(wrong, in: daemon)
        let (status, log) = try #require(Self.failedStart(daemon))
        #expect(status == 78, "EX_CONFIG, which the unit's RestartPreventExitStatus= does not restart")
        #expect(log.contains("key file \(keyFile)"), "\(log)")
        #expect(log.contains("wrong passphrase"), "\(log)")
        #expect(!log.contains(wrong) && !log.contains(Self.passphrase))
    }

    @Test("encrypted keys without the credential: the daemon stops, naming the key file")
    func missingCredential() throws {
        let daemon = try Self.daemon(passphrase: Self.passphrase)
        try daemon.start()
        let keyFile = try #require(try Self.keyFiles(daemon).keys.first)
        #expect(daemon.stop() == 0)

        try FileManager.default.removeItem(atPath: daemon.directory.appendingPathComponent("credentials/stepsign-key-passphrase").path)
        let (status, log) = try #require(Self.failedStart(daemon))
        #expect(status == 78)
        #expect(log.contains("key file \(keyFile)") && log.contains("no passphrase"), "\(log)")
    }

    @Test("no credential in CREDENTIALS_DIRECTORY: keys are plain PKCS#8 (PRIVATE KEY)")
    func noCredential() throws {
        let daemon = try Self.daemon(passphrase: nil)
        try daemon.start()
        let files = try Self.keyFiles(daemon)
        #expect(files.count == 1)
        #expect(files.values.allSatisfy { $0.hasPrefix("-----BEGIN PRIVATE KEY-----") })
    }

    @Test("an empty credential is refused at start")
    func emptyCredential() throws {
        let daemon = try Self.daemon(passphrase: "")
        let (status, log) = try #require(Self.failedStart(daemon))
        #expect(status == 78)
        #expect(log.contains("stepsign-key-passphrase is empty"), "\(log)")
    }
}
