import Foundation
import StepSignClient
import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import StepSignTestSupport
import Testing

/// Signing keys in a PKCS#11 token (SPEC §5.7, issue 41), on a real SoftHSM2 token made for each
/// test: the daemon makes its P-256 keys inside the token (sensitive, never extractable), keeps
/// only their `CKA_ID` and public half in `keys/`, signs ES256 signatures that stepsign-verify
/// and openssl accept, rotates and revokes them as file keys, and refuses to start (78) with a
/// wrong PIN or a missing module, never showing the PIN.
@Suite("PKCS#11 key store", .blocking)
struct PKCS11KeyStoreTests {
    /// A daemon (not started) on `token`, its PIN in a 0600 `pin_file`.
    private static func daemon(on token: SoftHSMToken, pin: String? = nil, module: String = SoftHSMToken.modulePath,
                               extra: String = "") throws -> DaemonHarness {
        let daemon = try DaemonHarness(config: """
            [signing]
            key_store = "pkcs11"
            [signing.pkcs11]
            module = "\(module)"
            token_label = "\(token.label)"
            pin_file = "PINFILE"
            max_sessions = 2
            \(extra)
            """, environment: token.environment, start: false)
        let pinFile = daemon.directory.appendingPathComponent("pkcs11.pin").path
        try ((pin ?? token.pin) + "\n").write(toFile: pinFile, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: pinFile)
        let config = try String(contentsOfFile: daemon.configPath, encoding: .utf8).replacingOccurrences(of: "PINFILE", with: pinFile)
        try DaemonHarness.writeConfig(config, to: daemon.configPath)
        return daemon
    }

    private static func sign(_ connection: StepSignConnection, _ payload: String) throws -> String {
        let reply = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": payload, "reason": "r", "authLevel": 0, "authenticatorType": 0,
        ])
        return try #require((reply.event("onAuthenticateUserAndSignData")?["details"])?["payloadSignature"]?.stringValue,
                            "\(reply.code) \(reply.message)")
    }

    private static func keyFiles(_ daemon: DaemonHarness) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory + "/keys").sorted()
    }

    /// Checks `jws` with openssl: the raw r||s as DER, over `header.payload`, with the key's SPKI.
    private static func opensslVerifies(_ jws: String, key: P256PublicKey, in directory: URL) throws -> Bool {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let raw = try #require(Base64URL.decode(parts[2]))
        let der = try ECDSASignature.derFromRaw(raw)
        let data = directory.appendingPathComponent("signed.txt").path
        let signature = directory.appendingPathComponent("signature.der").path
        let publicKey = directory.appendingPathComponent("public.pem").path
        try Data((parts[0] + "." + parts[1]).utf8).write(to: URL(fileURLWithPath: data))
        try Data(der).write(to: URL(fileURLWithPath: signature))
        try key.spkiPEM.write(toFile: publicKey, atomically: true, encoding: .utf8)
        let result = try Tools.run(["openssl", "dgst", "-sha256", "-verify", publicKey, "-signature", signature, data])
        return result.status == 0 && result.stdout.contains("Verified OK")
    }

    @Test("the daemon makes its signing key in the token, sensitive and never extractable, and signs what stepsign-verify and openssl verify")
    func signsWithATokenKey() throws {
        let token = try SoftHSMToken()
        defer { token.remove() }
        let daemon = try Self.daemon(on: token)
        try daemon.start()
        let connection = try daemon.connect()
        let kid = try #require(try connection.call("status").result?["activeKid"]?.stringValue)
        // keys/ holds the key's CKA_ID and public half, never a private key.
        let files = try Self.keyFiles(daemon)
        #expect(files.contains("\(kid).pkcs11"), "\(files)")
        #expect(!files.contains("\(kid).pem"), "\(files)")
        let record = try String(contentsOfFile: daemon.stateDirectory + "/keys/\(kid).pkcs11", encoding: .utf8)
        #expect(record.contains("pkcs11Id") && record.contains("BEGIN PUBLIC KEY") && !record.contains("PRIVATE"))

        // SoftHSM2 makes Ed25519 keys, so the log key is in the token too: no private key in keys/.
        #expect(files.contains("log-ed25519.token") && !files.contains("log-ed25519.key"), "\(files)")
        for name in files {
            let text = try String(contentsOfFile: daemon.stateDirectory + "/keys/" + name, encoding: .isoLatin1)
            #expect(!text.contains("PRIVATE KEY"), "\(name)")
        }
        let listing = try #require(try connection.call("admin.listKeys").result)
        let keys = try #require(listing["keys"]?.arrayValue)
        #expect(keys.first { $0["kid"]?.stringValue == kid }?["keyStore"]?.stringValue == "pkcs11", "\(keys)")
        #expect(listing["logKeyStore"]?.stringValue == "pkcs11")
        let listed = try Tools.run([Binaries.path("stepsign"), "admin", "key", "list"], environment: ["STEPSIGN_SOCKET": daemon.socketPath])
        #expect(listed.stdout.contains("in the PKCS#11 token"), "\(listed.stdout)\(listed.stderr)")

        // pkcs11-tool (OpenSC) shows the private key sensitive and never extractable.
        let objects = try token.listObjects()
        let privateObject = try #require(objects.components(separatedBy: "Private Key Object").dropFirst().first, "\(objects)")
        #expect(privateObject.contains("EC"), "\(objects)")
        #expect(privateObject.contains("never extractable"), "\(objects)")
        #expect(privateObject.contains("sensitive"), "\(objects)")

        for index in 0..<5 {
            let jws = try Self.sign(connection, "payload \(index)")
            let trusted = try connection.trustedKeys()
            #expect(try StepSignSignature.verify(jws, trustedKeys: trusted).payload == "payload \(index)")
            #expect(try JWS.parse(jws).header.kid == kid)
            let key = try #require(trusted.key(kid: kid))
            #expect(try Self.opensslVerifies(jws, key: key, in: daemon.directory))
            if index == 0 {
                let jwksPath = daemon.directory.appendingPathComponent("jwks.json").path
                try String(decoding: (try connection.call("getPublicKeys").result?["jwks"] ?? [:]).jsonBytes, as: UTF8.self)
                    .write(toFile: jwksPath, atomically: true, encoding: .utf8)
                let verified = try Tools.run([Binaries.path("stepsign-verify"), "verify", "--keys", jwksPath, "--min-level", "0", jws])
                #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
            }
        }
        // The backup holds the database and keys/ as it is: the token key's record, no private key.
        let backup = try #require(try connection.call("admin.backup").result, "admin.backup")
        let kept = backup["keys"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(kept.contains { $0.hasSuffix("\(kid).pkcs11") } && !kept.contains { $0.hasSuffix("\(kid).pem") }, "\(kept)")
        let backupPath = try #require(backup["path"]?.stringValue)
        let database = try Data(contentsOf: URL(fileURLWithPath: backupPath))
        #expect(database.range(of: Data("PRIVATE KEY".utf8)) == nil)
        // Restarted, the daemon finds the key in the token again by its CKA_ID.
        #expect(daemon.stop() == 0)
        try daemon.start()
        let again = try daemon.connect()
        #expect(try again.call("status").result?["activeKid"]?.stringValue == kid)
        let jws = try Self.sign(again, "after a restart")
        #expect(try StepSignSignature.verify(jws, trustedKeys: try again.trustedKeys()).payload == "after a restart")
    }

    @Test("on a TPM 2.0 (tpm2-pkcs11 on swtpm) the signing key is made in the TPM; the log key, which a TPM cannot make, stays a file")
    func signsWithATPMKey() throws {
        let tpm = try SoftwareTPMToken()
        defer { tpm.remove() }
        let daemon = try DaemonHarness(config: """
            [signing]
            key_store = "pkcs11"
            [signing.pkcs11]
            module = "\(SoftwareTPMToken.modulePath)"
            token_label = "\(tpm.label)"
            """, environment: tpm.environment, start: false)
        let credentials = daemon.directory.appendingPathComponent("credentials")
        try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        // The PIN as the systemd credential stepsign-pkcs11-pin.
        try (tpm.pin + "\n").write(toFile: credentials.appendingPathComponent("stepsign-pkcs11-pin").path, atomically: true,
                                   encoding: .utf8)
        daemon.environment["CREDENTIALS_DIRECTORY"] = credentials.path
        try daemon.start()
        let connection = try daemon.connect()
        let kid = try #require(try connection.call("status").result?["activeKid"]?.stringValue)
        let files = try Self.keyFiles(daemon)
        #expect(files.contains("\(kid).pkcs11") && !files.contains("\(kid).pem"), "\(files)")
        #expect(files.contains("log-ed25519.key") && !files.contains("log-ed25519.token"), "\(files)")
        let listing = try #require(try connection.call("admin.listKeys").result)
        #expect(listing["keys"]?.arrayValue?.first { $0["kid"]?.stringValue == kid }?["keyStore"]?.stringValue == "pkcs11")
        #expect(listing["logKeyStore"]?.stringValue == "file")
        let jws = try Self.sign(connection, "signed in a TPM")
        let trusted = try connection.trustedKeys()
        #expect(try StepSignSignature.verify(jws, trustedKeys: trusted).payload == "signed in a TPM")
        #expect(try Self.opensslVerifies(jws, key: try #require(trusted.key(kid: kid)), in: daemon.directory))
        // swtpm serves one client at a time: pkcs11-tool looks once the daemon is stopped.
        #expect(daemon.stop() == 0)
        #expect(!daemon.log.contains(tpm.pin))
        let objects = try tpm.listObjects()
        let privateObject = try #require(objects.components(separatedBy: "Private Key Object").dropFirst().first, "\(objects)")
        #expect(privateObject.contains("never extractable") && privateObject.contains("sensitive"), "\(objects)")
    }

    @Test("rotation and revocation make and retire token keys as they do key files; after a restart both sign and verify as before")
    func rotationAndRevocation() throws {
        let token = try SoftHSMToken()
        defer { token.remove() }
        let daemon = try Self.daemon(on: token)
        try daemon.start()
        let connection = try daemon.connect()
        let first = try #require(try connection.call("status").result?["activeKid"]?.stringValue)
        let old = try Self.sign(connection, "old")
        let rotated = try connection.call("admin.rotateKey")
        try #require(rotated.code == 0, "\(rotated.message) \(daemon.log.suffix(3000))")
        let second = try #require(try connection.call("status").result?["activeKid"]?.stringValue)
        #expect(second != first)
        #expect(try Self.keyFiles(daemon).filter { $0.hasSuffix(".pkcs11") }.count == 2)
        #expect(try Self.keyFiles(daemon).allSatisfy { !$0.hasSuffix(".pem") })
        let fresh = try Self.sign(connection, "new")
        #expect(try JWS.parse(fresh).header.kid == second)
        // The retired key stays published: its signature verifies.
        #expect(try StepSignSignature.verify(old, trustedKeys: try connection.trustedKeys()).payload == "old")

        let revoked = try connection.call("admin.revokeKey", ["kid": second])
        try #require(revoked.code == 0, "\(revoked.message)")
        let third = try #require(revoked.result?["activeKid"]?.stringValue)
        #expect(third != second && third != first)
        let keys = try #require(try connection.call("admin.listKeys").result?["keys"]?.arrayValue)
        #expect(keys.filter { $0["keyStore"]?.stringValue == "pkcs11" }.count == 3, "\(keys)")
        #expect(keys.first { $0["kid"]?.stringValue == second }?["revoked"]?.boolValue == true)

        #expect(daemon.stop() == 0)
        try daemon.start()
        let again = try daemon.connect()
        #expect(try again.call("status").result?["activeKid"]?.stringValue == third)
        let last = try Self.sign(again, "after")
        let trusted = try again.trustedKeys()
        #expect(try StepSignSignature.verify(last, trustedKeys: trusted).payload == "after")
        #expect(try StepSignSignature.verify(old, trustedKeys: trusted).payload == "old")
        let audit = try #require(try again.call("admin.auditVerify").result)
        #expect(audit["ok"]?.boolValue == true, "\(audit)")
    }

    @Test("an existing install moves to a token by a rotation: the file key stays published as retired")
    func movingAnInstallToAToken() throws {
        let token = try SoftHSMToken()
        defer { token.remove() }
        let daemon = try Self.daemon(on: token)
        // First the install as it was: key files.
        let tokenConfig = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
        try DaemonHarness.writeConfig(tokenConfig.replacingOccurrences(of: "key_store = \"pkcs11\"", with: "key_store = \"file\""),
                                      to: daemon.configPath)
        try daemon.start()
        let fileKid = try #require(try daemon.connect().call("status").result?["activeKid"]?.stringValue)
        let old = try Self.sign(try daemon.connect(), "signed with a key file")
        #expect(daemon.stop() == 0)

        try DaemonHarness.writeConfig(tokenConfig, to: daemon.configPath)
        try daemon.start()
        let connection = try daemon.connect()
        // The file key keeps signing until the rotation that the move is.
        #expect(try connection.call("status").result?["activeKid"]?.stringValue == fileKid)
        try #require(try connection.call("admin.rotateKey").code == 0)
        let tokenKid = try #require(try connection.call("status").result?["activeKid"]?.stringValue)
        let keys = try #require(try connection.call("admin.listKeys").result?["keys"]?.arrayValue)
        #expect(keys.first { $0["kid"]?.stringValue == fileKid }?["keyStore"]?.stringValue == "file")
        #expect(keys.first { $0["kid"]?.stringValue == tokenKid }?["keyStore"]?.stringValue == "pkcs11")
        let new = try Self.sign(connection, "signed in the token")
        let trusted = try connection.trustedKeys()
        #expect(try JWS.parse(new).header.kid == tokenKid)
        #expect(try StepSignSignature.verify(old, trustedKeys: trusted).payload == "signed with a key file")
        #expect(try StepSignSignature.verify(new, trustedKeys: trusted).payload == "signed in the token")
    }

    @Test("checkpoints are signed by the log key and the signing key in the token; a log-key rotation makes the next in the token, the old one signing beside it")
    func checkpointsAndLogKeyRotation() throws {
        let token = try SoftHSMToken()
        defer { token.remove() }
        let daemon = try Self.daemon(on: token)
        try daemon.start()
        let connection = try daemon.connect()
        _ = try Self.sign(connection, "one")
        func checkpoint(verifiedBy count: Int) throws {
            let reply = try #require(try connection.call("getCheckpoint").result)
            let note = try SignedNote(parsing: try #require(reply["checkpoint"]?.stringValue))
            let logKeys = try #require(try connection.call("getPublicKeys").result?["logKeys"]?.arrayValue)
                .map { try NoteVerifierKey(try #require($0.stringValue)) }
            #expect(try note.verifiedKeys(logKeys).count == count, "\(note.serialized)")
        }
        try checkpoint(verifiedBy: 2)
        let rotated = try connection.call("admin.rotateLogKey")
        try #require(rotated.code == 0, "\(rotated.message)")
        _ = try Self.sign(connection, "two")
        // Within the overlap the note carries the old and the new log key's lines, and the signing key's.
        try checkpoint(verifiedBy: 3)
        let files = try Self.keyFiles(daemon)
        let retired = try #require(files.first { $0.hasSuffix(".retired") }, "\(files)")
        #expect(files.contains("log-ed25519.token") && !files.contains("log-ed25519.key"), "\(files)")
        let record = try String(contentsOfFile: daemon.stateDirectory + "/keys/" + retired, encoding: .utf8)
        #expect(record.contains("pkcs11Id") && !record.contains("PRIVATE KEY"), "\(record)")
        #expect(daemon.stop() == 0)
        try daemon.start()
        let again = try daemon.connect()
        _ = try Self.sign(again, "three")
        let reply = try #require(try again.call("getCheckpoint").result)
        let note = try SignedNote(parsing: try #require(reply["checkpoint"]?.stringValue))
        let logKeys = try #require(try again.call("getPublicKeys").result?["logKeys"]?.arrayValue)
            .map { try NoteVerifierKey(try #require($0.stringValue)) }
        #expect(try note.verifiedKeys(logKeys).count == 3)
    }

    @Test("a token that stops answering: signing gets 15, nothing is recorded, and the daemon opens the token again when it is back")
    func tokenStopsAnswering() throws {
        let token = try SoftHSMToken()
        defer { token.remove() }
        let daemon = try Self.daemon(on: token)
        try daemon.start()
        let connection = try daemon.connect()
        _ = try Self.sign(connection, "before")
        let signatures = try daemon.ledgerSignatures().count
        let tokens = token.directory.appending("tokens")
        let away = token.directory.appending("away")
        #expect(rename(tokens, away) == 0)
        let refused = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "while away", "reason": "r", "authLevel": 0, "authenticatorType": 0,
        ])
        #expect(refused.code == 15, "\(refused.code) \(refused.message)")
        #expect(rename(away, tokens) == 0)
        let jws = try Self.sign(connection, "after")
        #expect(try StepSignSignature.verify(jws, trustedKeys: try connection.trustedKeys()).payload == "after")
        #expect(try daemon.ledgerSignatures().count == signatures + 1, "the refused request left no ledger row")
    }

    @Test("with max_sessions = 1, 32 connections signing at once all complete, and status answers meanwhile")
    func manySignersOnOneSession() throws {
        let token = try SoftHSMToken()
        defer { token.remove() }
        let daemon = try Self.daemon(on: token, extra: "max_sessions = 1")
        try daemon.start()
        defer { _ = daemon.stop() }
        let connections = try (0..<32).map { _ in try daemon.connect() }
        let tally = Tally()
        let group = DispatchGroup()
        for (index, connection) in connections.enumerated() {
            // Each connection is used by its one thread only.
            nonisolated(unsafe) let connection = connection
            DispatchQueue.global().async(group: group) {
                for round in 0..<4 {
                    do {
                        _ = try Self.sign(connection, "payload \(index).\(round)")
                        tally.add(nil)
                    } catch {
                        tally.add("\(error)")
                    }
                }
            }
        }
        // Meanwhile, status on a connection of its own answers within a second each time.
        let status = try daemon.connect()
        var slowest = 0.0
        while group.wait(timeout: .now() + 0.05) == .timedOut {
            let started = Date()
            #expect(try status.call("status").code == 0)
            slowest = max(slowest, Date().timeIntervalSince(started))
        }
        let (signed, failures) = tally.counts
        #expect(failures.isEmpty, "\(failures)")
        #expect(signed == 32 * 4)
        #expect(slowest < 1, "status took \(slowest) s")
    }

    @Test("a wrong PIN or a missing module stops the start with 78, naming the token or module and never the PIN")
    func wrongPINAndMissingModule() throws {
        let token = try SoftHSMToken()
        defer { token.remove() }
        let wrongPIN = "Wrong-Token-Pin-31"
        let daemon = try Self.daemon(on: token, pin: wrongPIN)
        do {
            try daemon.start()
            Issue.record("stepsignd started with a wrong PIN")
        } catch let HarnessError.exited(status, log) {
            #expect(status == 78, "\(log)")
            #expect(log.contains("CKR_PIN_INCORRECT"), "\(log)")
            #expect(!log.contains(wrongPIN) && !log.contains(token.pin), "\(log)")
        }

        let missing = try Self.daemon(on: token, module: "/usr/lib/softhsm/no-such-module.so")
        do {
            try missing.start()
            Issue.record("stepsignd started without its module")
        } catch let HarnessError.exited(status, log) {
            #expect(status == 78, "\(log)")
            #expect(log.contains("no-such-module.so"), "\(log)")
        }
    }

    @Test("the PIN is in no log line, argv or environment of the running daemon")
    func pinStaysSecret() throws {
        let token = try SoftHSMToken()
        defer { token.remove() }
        let daemon = try Self.daemon(on: token)
        try daemon.start()
        try daemon.addUser()
        _ = try Self.sign(try daemon.connect(), "one")
        let pid = try #require(daemon.process?.pid)
        let cmdline = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))
        let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
        let pin = Data(token.pin.utf8)
        #expect(cmdline.range(of: pin) == nil)
        #expect(environ.range(of: pin) == nil)
        #expect(daemon.stop() == 0)
        #expect(!daemon.log.contains(token.pin))
        #expect(!daemon.log.isEmpty)
    }
}

/// Signatures made and failures seen by the threads of a test.
private final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var signed = 0
    private var failures: [String] = []

    /// One signature made (nil), or a failure.
    func add(_ failure: String?) {
        lock.withLock { if let failure { failures.append(failure) } else { signed += 1 } }
    }

    var counts: (Int, [String]) { lock.withLock { (signed, failures) } }
}
