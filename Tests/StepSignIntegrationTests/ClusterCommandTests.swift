import Foundation
import StepSignTestSupport
import Testing

/// `stepsign admin cluster root-key new` and `endorse` (SPEC §8): the root key is written
/// private and never over another file, read only when private, and an endorsement is made
/// only for the key and instance the operator named.
@Suite("stepsign admin cluster", .blocking)
struct ClusterCommandTests {
    @Test("root-key new writes a 0600 key and prints the public half; it never overwrites a file")
    func rootKeyNew() throws {
        let directory = try TemporaryDirectory("cluster-cli", mode: 0o700)
        defer { directory.remove() }
        let path = directory.appending("root.pem")
        let made = try Tools.run([Binaries.path("stepsign"), "admin", "cluster", "root-key", "new", "--out", path])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.hasPrefix("-----BEGIN PUBLIC KEY-----"))
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        let before = try String(contentsOfFile: path, encoding: .utf8)
        let again = try Tools.run([Binaries.path("stepsign"), "admin", "cluster", "root-key", "new", "--out", path])
        #expect(again.status == 2 && again.stderr.contains("File exists"), "\(again.stderr)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == before)
    }

    @Test("seal-key new writes 32 random bytes as base64url, 0600; it never overwrites a file")
    func sealKeyNew() throws {
        let directory = try TemporaryDirectory("cluster-cli", mode: 0o700)
        defer { directory.remove() }
        let path = directory.appending("seal.key")
        let made = try Tools.run([Binaries.path("stepsign"), "admin", "cluster", "seal-key", "new", "--out", path])
        #expect(made.status == 0, "\(made.stderr)")
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        let line = try String(contentsOfFile: path, encoding: .utf8)
        #expect(line.count == 44 && line.hasSuffix("\n") && !line.contains("=") && !line.contains("+") && !line.contains("/"))
        let other = directory.appending("other.key")
        _ = try Tools.run([Binaries.path("stepsign"), "admin", "cluster", "seal-key", "new", "--out", other])
        #expect(try String(contentsOfFile: other, encoding: .utf8) != line)
        let again = try Tools.run([Binaries.path("stepsign"), "admin", "cluster", "seal-key", "new", "--out", path])
        #expect(again.status == 2 && again.stderr.contains("File exists"), "\(again.stderr)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == line)
    }

    @Test("endorse refuses a root key others may read, a wrong instance and an unknown kid; a kid starting with '-' is read")
    func endorseRefusals() throws {
        let root = try ClusterRoot()
        let daemon = try DaemonHarness(config: root.config)
        let kid = try #require(try daemon.connect().call("status").result?["activeKid"]?.stringValue)

        let wrongInstance = try root.endorse(kid: kid, instance: "host-x", via: daemon)
        #expect(wrongInstance.status == 1 && wrongInstance.stderr.contains("not \"host-x\""), "\(wrongInstance.stderr)")
        let unknown = try root.endorse(kid: "-no-such-kid", instance: "stepsign-test", via: daemon)
        #expect(unknown.status == 1 && unknown.stderr.contains("no signing key -no-such-kid"), "\(unknown.stderr)")

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: root.privateKeyPath)
        let open = try root.endorse(kid: kid, instance: "stepsign-test", via: daemon)
        #expect(open.status == 2 && open.stderr.contains(root.privateKeyPath) && open.stderr.contains("644"), "\(open.stderr)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: root.privateKeyPath)

        // An own key needs no endorsement to be trusted here; endorsing it is accepted all the same.
        let endorsed = try root.endorse(kid: kid, instance: "stepsign-test", via: daemon)
        #expect(endorsed.status == 0, "\(endorsed.stderr)")
        let keys = try #require(try daemon.connect().call("admin.listKeys").result?["keys"]?.arrayValue)
        #expect(keys.first { $0["kid"]?.stringValue == kid }?["trust"]?.stringValue == "own")
    }

    @Test("admin.endorseKey without a cluster root is 170; with one, an endorsement not signed by it is 4")
    func endorseKeyOperation() throws {
        let daemon = try DaemonHarness()
        #expect(try daemon.connect().call("admin.endorseKey", ["endorsement": "x.y.z"]).code == 170)
        let root = try ClusterRoot()
        #expect(try daemon.reload(config: root.config) == .reloaded)
        #expect(try daemon.connect().call("admin.endorseKey", ["endorsement": "x.y.z"]).code == 4)
    }
}
