import Foundation
import StepSignProtocol
import StepSignClient
import Testing

/// SIGHUP re-reads the configuration (SPEC §6, §7): the new one decides the next request, on
/// connections that stay open; a bad file keeps the one in force.
@Suite("Reload (SIGHUP)", .blocking)
struct ReloadTests {
    private func signLevelZero(_ connection: StepSignConnection) throws -> ClientReply {
        try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "p", "reason": "r", "authLevel": 0, "authenticatorType": 0,
        ])
    }

    @Test("allow_level_0 turned on by a reload applies to the next request of a connection that stays open")
    func policyChangeOnOpenConnection() throws {
        let daemon = try DaemonHarness(config: "[signing]\nallow_level_0 = false")
        let connection = try daemon.connect()
        #expect(try signLevelZero(connection).code == 170)
        #expect(try daemon.reload(config: "[signing]\nallow_level_0 = true") == .reloaded)
        let signed = try signLevelZero(connection)
        #expect(signed.code == 0)
        #expect(signed.statusCode(of: "onAuthenticateUserAndSignData") == 100)
    }

    @Test("max_attempts lowered by a reload counts for the next challenge")
    func maxAttemptsChange() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        #expect(try connection.setUser().int("attemptsLeft", of: "getPassword") == 3)
        #expect(try connection.call("resetAuthState").code == 0)
        #expect(try daemon.reload(config: "[password]\nmax_attempts = 5") == .reloaded)
        #expect(try connection.setUser().int("attemptsLeft", of: "getPassword") == 5)
    }

    @Test("a peer removed from admin_uids by a reload gets 13 on its next admin request; the connection keeps working")
    func adminRightRevoked() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        #expect(try connection.call("admin.listKeys").code == 0)
        #expect(try daemon.reload(config: "[access]\nadmin_uids = []") == .reloaded)
        #expect(try connection.call("admin.listKeys").code == 13)
        #expect(try connection.call("status").code == 0)
    }

    @Test("a peer removed from every access list by a reload gets 13 on its next request and is disconnected")
    func accessRevoked() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        #expect(try connection.call("status").code == 0)
        // Keep the harness's own uid out of both lists; the daemon stays up for nobody.
        #expect(try daemon.reload(config: "[access]\nadmin_uids = []\nclient_uids = []") == .reloaded)
        let reply = try connection.call("status")
        #expect(reply.code == 13)
        #expect(throws: ClientError.self) { try connection.readLine(timeout: 10) }
    }

    @Test("a bad file keeps the configuration in force and the log names file, line and key")
    func badFileKeepsOld() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        let bad = DaemonHarness.config("") + "\n[forgot_password]\ncode_length = \"eight\"\n"
        let lineNumber = bad.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.hasPrefix("code_length") }! + 1
        #expect(try daemon.reload(writing: bad.replacingOccurrences(of: "allow_level_0 = true", with: "allow_level_0 = false")) == .keptOld)
        let line = try #require(daemon.logLines(message: "configuration not reloaded, keeping the one in force").last)
        #expect(line.contains("\(daemon.configPath):\(lineNumber)"), "\(line)")
        #expect(line.contains("forgot_password.code_length"), "\(line)")
        // allow_level_0 = false was in the bad file and is not in force.
        #expect(try signLevelZero(connection).code == 0)
    }

    @Test("log.level changed by a reload applies at once: notices appear that the old level hid")
    func logLevelChange() throws {
        let daemon = try DaemonHarness(config: "[log]\nlevel = \"warning\"")
        let admin = try daemon.connect()
        #expect(try admin.call("admin.addUser", ["user": "bob", "password": DaemonHarness.password]).code == 0)
        #expect(try daemon.reload(config: "[log]\nlevel = \"info\"") == .reloaded)
        #expect(try admin.call("admin.addUser", ["user": "carol", "password": DaemonHarness.password]).code == 0)
        let added = daemon.logLines(message: "user added")
        #expect(added.count == 1, "\(added)")
        #expect(added.first?.contains("user=carol") == true)
        #expect(!daemon.log.contains("user=bob"))
    }

    @Test("a SIGHUP that changes [storage] is applied for the rest, its line naming the key that needs a restart")
    func reloadKeepsTheStore() throws {
        let daemon = try DaemonHarness()
        #expect(try daemon.reload(config: "[storage.postgresql]\npool_size = 2") == .reloaded)
        let line = try #require(daemon.logLines(message: "configuration reloaded").last)
        #expect(line.contains("restartNeededFor=storage.postgresql.pool_size"), "\(line)")
    }

    @Test("a SIGHUP that changes keys read only at start names each of them in its log line and applies the rest")
    func restartOnlyKeysNamed() throws {
        let daemon = try DaemonHarness(config: "[signing]\nallow_level_0 = false")
        let connection = try daemon.connect()
        #expect(try signLevelZero(connection).code == 170)
        let tiles = daemon.directory.appendingPathComponent("tiles").path
        let metrics = daemon.directory.appendingPathComponent("metrics.sock").path
        #expect(try daemon.reload(config: """
            [signing]
            allow_level_0 = true
            [metrics]
            listen = "unix:\(metrics)"
            [ledger]
            tiles_dir = "\(tiles)"
            [server]
            socket_mode = "0600"
            [storage.postgresql]
            pool_size = 2
            """) == .reloaded)
        let line = try #require(daemon.logLines(message: "configuration reloaded").last)
        for key in ["metrics.listen", "ledger.tiles_dir", "server.socket_mode", "storage.postgresql.pool_size"] {
            #expect(line.contains(key), "\(key) not named: \(line)")
        }
        #expect(!line.contains("signing.allow_level_0"), "\(line)")
        // What can be applied is: level 0 signs on the connection that stayed open.
        #expect(try signLevelZero(connection).code == 0)
        // Nothing listens for metrics, and no tile was written: both wait for a restart.
        #expect(!FileManager.default.fileExists(atPath: tiles))
        #expect(!FileManager.default.fileExists(atPath: metrics))
    }

    @Test("a SIGHUP that changes instance keeps the old name (the keys are registered under it) until a restart")
    func reloadKeepsTheInstance() throws {
        let daemon = try DaemonHarness()
        #expect(try daemon.reload(config: "instance = \"renamed\"") == .reloaded)
        let line = try #require(daemon.logLines(message: "configuration reloaded").last)
        #expect(line.contains("restartNeededFor=instance"), "\(line)")
        let signed = try signLevelZero(try daemon.connect())
        let details = try #require(signed.event("onAuthenticateUserAndSignData")?["details"])
        let jws = try #require(details["payloadSignature"]?.stringValue)
        let claims = try #require(jws.split(separator: ".").dropFirst().first.map(String.init))
        var base64 = claims.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        let decoded = try JSONParser.parse(Array(try #require(Data(base64Encoded: base64))))
        #expect(decoded["iss"]?.stringValue == "stepsign-test")
    }
}
