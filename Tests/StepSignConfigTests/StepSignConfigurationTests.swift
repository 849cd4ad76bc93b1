import Foundation
import StepSignProtocol
import Testing
@testable import StepSignConfig

@Suite("Configuration")
struct StepSignConfigurationTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private func failure(_ text: String, file: String = "test.toml") -> ConfigError? {
        do {
            _ = try StepSignConfiguration.parse(text, file: file)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Defaults

    @Test func anEmptyFileGivesTheDefaults() throws {
        #expect(try StepSignConfiguration.parse("", file: "empty.toml") == .default)
    }

    @Test func theDefaultsAreThoseOfTheSpec() {
        let c = StepSignConfiguration.default
        #expect(c.instance == "stepsign")
        #expect(c.server == .init(
            socket: "/run/stepsign/stepsignd.sock", socketMode: 0o660, socketGroup: "stepsign",
            stateDir: "/var/lib/stepsign", maxConnections: 256, maxConnectionsPerUID: 64, idleTimeoutSeconds: 300,
            challengeTimeoutSeconds: 300))
        #expect(c.access == .init(clientUIDs: [], clientGroups: ["stepsign"], adminUIDs: [0], adminGroups: []))
        #expect(c.signing.allowLevel0 == false)
        #expect(c.password.maxAttempts == 3)
        #expect(c.password.blockSeconds == 0)
        #expect(c.password.maxAgeDays == 90)
        #expect(c.password.history == 5)
        #expect(c.password.commonPasswordsFile == "")
        #expect(c.password.scryptN == 32768 && c.password.scryptR == 8 && c.password.scryptP == 1)
        #expect(c.password.policy == PasswordPolicy(
            minL: 8, maxL: 64, minDg: 1, minUc: 1, minLc: 1, minSc: 1, charsNotAllowed: "",
            repetition: 3, userIDCheck: true, seqCheck: true, blackListedCommonPassword: true, msg: ""))
        #expect(c.forgotPassword == .init(enabled: true, codeLength: 8, codeTTLSeconds: 600, maxAttempts: 3, notifier: []))
        #expect(c.lda.enabled == true)
        #expect(c.idv == .init(issuer: "", trustedKeys: "", maxAgeSeconds: 300))
        #expect(c.log.level == .info)
        #expect(c.ledger == .init(checkpointEntries: 1000, checkpointSeconds: 60))
        #expect(c.storage == .init(backend: .sqlite, postgresql: .init(
            host: "/run/postgresql", port: 5432, database: "stepsign", user: "stepsign", passwordFile: "",
            tls: .disable, tlsCAFile: "", poolSize: 8)))
    }

    @Test("[storage]: the commented-out [storage.postgresql] of stepsignd.toml, uncommented, parses")
    func theDocumentedPostgresSectionParses() throws {
        let path = Self.packageRoot.appendingPathComponent("config/stepsignd.toml").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
            .replacingOccurrences(of: "backend = \"sqlite\"", with: "backend = \"postgresql\"")
            .replacingOccurrences(of: "# [storage.postgresql]", with: "[storage.postgresql]")
            .split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in
                for key in ["host", "port", "database", "user", "password_file", "tls", "tls_ca_file", "pool_size"]
                where line.hasPrefix("# \(key) =") { return String(line.dropFirst(2)) }
                return String(line)
            }
            .joined(separator: "\n")
        let c = try StepSignConfiguration.parse(text, file: "uncommented.toml")
        #expect(c.storage == .init(backend: .postgresql, postgresql: .init()))
    }

    @Test("[storage]: backend and every [storage.postgresql] key are read")
    func storageTable() throws {
        let c = try StepSignConfiguration.parse("""
            [storage]
            backend = "postgresql"
            [storage.postgresql]
            host = "db.example"
            port = 6432
            database = "signing"
            user = "signer"
            password_file = "/etc/stepsign/db-password"
            tls = "verify-full"
            tls_ca_file = "/etc/stepsign/db-ca.pem"
            pool_size = 4
            """, file: "t.toml")
        #expect(c.storage == .init(backend: .postgresql, postgresql: .init(
            host: "db.example", port: 6432, database: "signing", user: "signer",
            passwordFile: "/etc/stepsign/db-password", tls: .verifyFull, tlsCAFile: "/etc/stepsign/db-ca.pem",
            poolSize: 4)))
        let socket = try StepSignConfiguration.parse(
            "[storage]\nbackend = \"postgresql\"\n[storage.postgresql]\nhost = \"/tmp/pg\"\n", file: "t.toml")
        #expect(socket.storage.postgresql.usesUnixSocket)
    }

    @Test("[storage]: bad values are refused with file, line and key; a password in the file is refused")
    func storageTableRefusals() throws {
        let cases: [(String, String)] = [
            ("[storage]\nbackend = \"mysql\"\n", "storage.backend"),
            ("[storage]\nengine = \"sqlite\"\n", "storage.engine"),
            ("[storage.postgresql]\nport = 0\n", "storage.postgresql.port"),
            ("[storage.postgresql]\nport = 65536\n", "storage.postgresql.port"),
            ("[storage.postgresql]\nhost = \"\"\n", "storage.postgresql.host"),
            ("[storage.postgresql]\nhost = \"db host\"\n", "storage.postgresql.host"),
            ("[storage.postgresql]\nhost = \"/\(String(repeating: "d", count: 100))\"\n", "storage.postgresql.host"),
            ("[storage.postgresql]\ndatabase = \"\"\n", "storage.postgresql.database"),
            ("[storage.postgresql]\nuser = \"\"\n", "storage.postgresql.user"),
            ("[storage.postgresql]\npassword_file = \"db-password\"\n", "storage.postgresql.password_file"),
            ("[storage.postgresql]\ntls = \"prefer\"\n", "storage.postgresql.tls"),
            ("[storage.postgresql]\ntls = \"require\"\n", "storage.postgresql.tls"),
            ("[storage.postgresql]\nhost = \"db\"\ntls_ca_file = \"/ca.pem\"\n", "storage.postgresql.tls_ca_file"),
            ("[storage.postgresql]\nhost = \"db\"\ntls = \"verify-full\"\ntls_ca_file = \"ca.pem\"\n", "storage.postgresql.tls_ca_file"),
            ("[storage.postgresql]\npool_size = 0\n", "storage.postgresql.pool_size"),
            ("[storage.postgresql]\npool_size = 1001\n", "storage.postgresql.pool_size"),
            ("[storage.postgresql]\npassword = \"hunter2-secret\"\n", "storage.postgresql.password"),
        ]
        for (text, key) in cases {
            let error = try #require(failure(text), "\(text)")
            #expect(error.key == key, "\(text): \(error)")
            #expect(error.line == text.split(separator: "\n").count, "\(text): \(error)")
            #expect(!error.description.contains("hunter2-secret"), "\(error)")
        }
        let password = try #require(failure("[storage.postgresql]\npassword = \"hunter2-secret\"\n"))
        #expect(password.description.contains("password_file"))
    }

    @Test("[ledger]: checkpoint_entries 1 to 1000000, checkpoint_seconds 1 to 86400; others refused with file, line and key")
    func ledgerTable() throws {
        let c = try StepSignConfiguration.parse("[ledger]\ncheckpoint_entries = 10\ncheckpoint_seconds = 5\n", file: "t.toml")
        #expect(c.ledger == .init(checkpointEntries: 10, checkpointSeconds: 5))
        for text in ["checkpoint_entries = 0", "checkpoint_entries = 1000001", "checkpoint_seconds = 0",
                     "checkpoint_seconds = 86401", "checkpoint_entries = \"10\"", "checkpoints = 1"] {
            let error = try #require(failure("[ledger]\n" + text + "\n"), "\(text)")
            #expect(error.line == 2, "\(text)")
            #expect(error.description.contains("ledger."), "\(error)")
        }
    }

    @Test("[cluster] root_key takes PEM or JWK text or an absolute path; anything else is refused naming the key")
    func clusterRootKey() throws {
        #expect(try StepSignConfiguration.parse("[cluster]\nroot_key = \"/etc/stepsign/root.pub\"\n", file: "t.toml")
            .cluster.rootKeyIsFile)
        let pem = "-----BEGIN PUBLIC KEY-----\\nMFkw\\n-----END PUBLIC KEY-----\\n"
        #expect(try !StepSignConfiguration.parse("[cluster]\nroot_key = \"\(pem)\"\n", file: "t.toml").cluster.rootKeyIsFile)
        #expect(try StepSignConfiguration.parse("[cluster]\nroot_key = '{\"kty\":\"EC\"}'\n", file: "t.toml").cluster.rootKey.hasPrefix("{"))
        for text in ["root_key = \"relative/root.pub\"", "root_key = 1", "rootkey = \"\""] {
            let error = try #require(failure("[cluster]\n" + text + "\n"), "\(text)")
            #expect(error.line == 2 && error.description.contains("cluster."), "\(error)")
        }
    }

    @Test func missingKeysTakeTheirDefaults() throws {
        let c = try StepSignConfiguration.parse("[password]\nmax_attempts = 5\n", file: "t.toml")
        var expected = StepSignConfiguration.default
        expected.password.maxAttempts = 5
        #expect(c == expected)
    }

    // MARK: Witnesses (SPEC §5.6)

    static let witnessKey = "witness.example.org+a1b2c3d4+BHr/V7hZ6T/5bN2Zb1kH1M5s4Jv2s8Q7rV0x2pO3kLmN"

    @Test("[[witness]] tables are read in order; ledger.witness_quorum is at most their number")
    func witnesses() throws {
        let text = """
            [ledger]
            witness_quorum = 2
            [[witness]]
            name = "witness.example.org"
            url = "https://witness.example.org"
            key = "\(Self.witnessKey)"
            [[witness]]
            name = "w2.example"
            url = "http://127.0.0.1:8080"
            key = "w2.example+0011aabb+BHr/V7hZ6T/5bN2Zb1kH1M5s4Jv2s8Q7rV0x2pO3kLmN"
            """
        let c = try StepSignConfiguration.parse(text, file: "w.toml")
        #expect(c.witnesses.map(\.name) == ["witness.example.org", "w2.example"])
        #expect(c.witnesses[0].url == "https://witness.example.org" && c.witnesses[0].key == Self.witnessKey)
        #expect(c.ledger.witnessQuorum == 2)
        #expect(try StepSignConfiguration.parse("", file: "e.toml").witnesses.isEmpty)
    }

    @Test(arguments: [
        ("[ledger]\nwitness_quorum = 1\n", "ledger.witness_quorum", "more than the 0 [[witness]]"),
        ("[[witness]]\nname = \"w\"\nurl = \"https://w\"\n", "witness[1].name", "needs name, url and key"),
        ("[[witness]]\nname = \"w x\"\nurl = \"https://w\"\nkey = \"w x+a1b2c3d4+B\"\n", "witness[1].name", "one word"),
        ("[[witness]]\nname = \"w\"\nurl = \"ftp://w\"\nkey = \"w+a1b2c3d4+B\"\n", "witness[1].url", "http"),
        ("[[witness]]\nname = \"w\"\nurl = \"https://w\"\nkey = \"other+a1b2c3d4+BHr/V7hZ6T/5bN2Zb1kH1M5s4Jv2s8Q7rV0x2pO3kLmN\"\n", "witness[1].key", "named as the witness"),
        ("[[witness]]\nname = \"w\"\nurl = \"https://w\"\nkey = \"w+a1b2c3d4+AXr/V7hZ6T/5bN2Zb1kH1M5s4Jv2s8Q7rV0x2pO3kLmN\"\n", "witness[1].key", "type 0x04"),
        ("[[witness]]\nname = \"w\"\nurl = \"https://w\"\nkey = \"w+a1b2c3d4+BHr/V7hZ6T/5bN2Zb1kH1M5s4Jv2s8Q7rV0x2pO3kLmN\"\nport = 1\n", "witness[1].port", "unknown key"),
        ("[[witness]]\nname = \"w\"\nurl = \"https://w\"\nkey = \"w+a1b2c3d4+BHr/V7hZ6T/5bN2Zb1kH1M5s4Jv2s8Q7rV0x2pO3kLmN\"\n"
            + "[[witness]]\nname = \"w\"\nurl = \"https://v\"\nkey = \"w+a1b2c3d4+BHr/V7hZ6T/5bN2Zb1kH1M5s4Jv2s8Q7rV0x2pO3kLmN\"\n",
         "witness[2].name", "a second [[witness]] named w"),
    ])
    func badWitnessesAreRefusedNamingTheKey(text: String, key: String, message: String) throws {
        let error = try #require(failure(text))
        #expect(error.key == key, "\(error)")
        #expect(error.message.contains(message), "\(error)")
    }

    @Test("[stepup] is off by default and reads its four keys, each checked")
    func stepUpReuse() throws {
        let off = try StepSignConfiguration.parse("", file: "e.toml").stepUp
        #expect(off == .init(reuseSeconds: 0, reuseMaxUses: 10, reuseScope: .session, reuseLevels: [1]))
        #expect(!off.reusable(level: 1))
        let on = try StepSignConfiguration.parse(
            "[stepup]\nreuse_seconds = 300\nreuse_max_uses = 50\nreuse_scope = \"peer\"\nreuse_levels = [1, 4]\n", file: "s.toml").stepUp
        #expect(on == .init(reuseSeconds: 300, reuseMaxUses: 50, reuseScope: .peer, reuseLevels: [1, 4]))
        #expect(on.reusable(level: 4) && !on.reusable(level: 2))
        for (text, key) in [("reuse_seconds = 86401", "stepup.reuse_seconds"), ("reuse_max_uses = 0", "stepup.reuse_max_uses"),
                            ("reuse_scope = \"uid\"", "stepup.reuse_scope"), ("reuse_levels = [0]", "stepup.reuse_levels"),
                            ("reuse_levels = [1, 1]", "stepup.reuse_levels"), ("reuse = 1", "stepup.reuse")] {
            let error = try #require(failure("[stepup]\n" + text + "\n"))
            #expect(error.key == key, "\(error)")
        }
    }

    @Test("signing.max_batch_items: 1000 by default, 1 to 10000")
    func maxBatchItems() throws {
        #expect(try StepSignConfiguration.parse("", file: "e.toml").signing.maxBatchItems == 1000)
        #expect(try StepSignConfiguration.parse("[signing]\nmax_batch_items = 1\n", file: "b.toml").signing.maxBatchItems == 1)
        for bad in ["0", "10001", "\"many\""] {
            let error = try #require(failure("[signing]\nmax_batch_items = \(bad)\n"))
            #expect(error.key == "signing.max_batch_items", "\(error)")
        }
    }

    @Test("signing.idempotency_seconds: 86400 by default, 60 to 2592000")
    func idempotencySeconds() throws {
        #expect(try StepSignConfiguration.parse("", file: "e.toml").signing.idempotencySeconds == 86400)
        #expect(try StepSignConfiguration.parse("[signing]\nidempotency_seconds = 60\n", file: "i.toml").signing.idempotencySeconds == 60)
        for bad in ["59", "2592001", "\"day\""] {
            let error = try #require(failure("[signing]\nidempotency_seconds = \(bad)\n"))
            #expect(error.key == "signing.idempotency_seconds", "\(error)")
        }
    }

    @Test("signing.key_store: \"file\" by default; \"pkcs11\" needs [signing.pkcs11] module; the PIN is never in the file")
    func keyStoreAndPKCS11() throws {
        let defaults = try StepSignConfiguration.parse("", file: "e.toml").signing
        #expect(defaults.keyStore == .file)
        #expect(defaults.pkcs11 == .init(module: "", tokenLabel: "", pinFile: "", maxSessions: 4))
        let token = try StepSignConfiguration.parse("""
            [signing]
            key_store = "pkcs11"
            [signing.pkcs11]
            module = "/usr/lib/softhsm/libsofthsm2.so"
            token_label = "stepsign"
            pin_file = "/etc/stepsign/pkcs11-pin"
            max_sessions = 8
            """, file: "t.toml").signing
        #expect(token.keyStore == .pkcs11)
        #expect(token.pkcs11 == .init(module: "/usr/lib/softhsm/libsofthsm2.so", tokenLabel: "stepsign",
                                      pinFile: "/etc/stepsign/pkcs11-pin", maxSessions: 8))
        for (bad, key, says) in [
            ("[signing]\nkey_store = \"hsm\"\n", "signing.key_store", "file, pkcs11"),
            ("[signing]\nkey_store = \"pkcs11\"\n", "signing.key_store", "module"),
            ("[signing.pkcs11]\nmodule = \"libsofthsm2.so\"\n", "signing.pkcs11.module", "absolute"),
            ("[signing.pkcs11]\npin_file = \"pin\"\n", "signing.pkcs11.pin_file", "absolute"),
            ("[signing.pkcs11]\npin = \"1234\"\n", "signing.pkcs11.pin", "stepsign-pkcs11-pin"),
            ("[signing.pkcs11]\nmax_sessions = 0\n", "signing.pkcs11.max_sessions", "1 to 256"),
            ("[signing.pkcs11]\ntoken_label = \"\(String(repeating: "t", count: 33))\"\n", "signing.pkcs11.token_label", "32"),
        ] {
            let error = try #require(failure(bad), "\(bad)")
            #expect(error.key == key && error.message.contains(says), "\(bad): \(error)")
            #expect(!error.description.contains("1234"))
        }
    }

    @Test func tilesDirIsAnAbsolutePathOrNone() throws {
        #expect(try StepSignConfiguration.parse("", file: "e.toml").ledger.tilesDir == "")
        #expect(try StepSignConfiguration.parse("[ledger]\ntiles_dir = \"/var/www/log\"\n", file: "t.toml").ledger.tilesDir == "/var/www/log")
        for bad in ["tiles", "./tiles", "/"] {
            let error = try #require(failure("[ledger]\ntiles_dir = \"\(bad)\"\n"))
            #expect(error.key == "ledger.tiles_dir" && error.message.contains("absolute path"), "\(error)")
        }
    }

    @Test func metricsListenOnAUnixSocketOrALoopbackPortOnly() throws {
        func listen(_ text: String) throws -> StepSignConfiguration.Metrics.Listen {
            try StepSignConfiguration.parse("[metrics]\nlisten = \"\(text)\"\n", file: "t.toml").metrics.listen
        }
        #expect(try listen("") == .off)
        #expect(try listen("unix:/run/stepsign/metrics.sock") == .unix(path: "/run/stepsign/metrics.sock"))
        #expect(try listen("127.0.0.1:9464") == .loopback(host: "127.0.0.1", port: 9464))
        #expect(try listen("127.8.9.10:1") == .loopback(host: "127.8.9.10", port: 1))
        #expect(try listen("[::1]:9464") == .loopback(host: "::1", port: 9464))
        for (bad, says) in [("0.0.0.0:9464", "loopback"), ("10.0.0.1:9464", "loopback"), ("localhost:9464", "loopback"),
                            ("[::]:9464", "loopback"), ("127.0.0.1", "PORT"), ("127.0.0.1:0", "port"),
                            ("127.0.0.1:65536", "port"), ("127.0.0.01:9464", "loopback"), ("unix:metrics.sock", "absolute"),
                            ("unix:/" + String(repeating: "a", count: 107), "107")] {
            let error = try #require(failure("[metrics]\nlisten = \"\(bad)\"\n"), "\(bad)")
            #expect(error.key == "metrics.listen" && error.message.contains(says), "\(bad): \(error)")
        }
        #expect(failure("[metrics]\nport = 9464\n") != nil)
    }

    @Test("[ssh_agent]: off by default; namespaces, unlock_seconds and max_uses are checked (SPEC §3.5)")
    func sshAgent() throws {
        #expect(StepSignConfiguration.default.sshAgent == .init(socket: "", namespaces: ["git", "file"], allowAuthentication: false,
                                                                unlockSeconds: 900, maxUses: 100))
        #expect(!StepSignConfiguration.default.sshAgent.enabled)
        let c = try StepSignConfiguration.parse("""
            [ssh_agent]
            socket = "/run/stepsign/agent.sock"
            namespaces = ["git"]
            allow_authentication = true
            unlock_seconds = 60
            max_uses = 5
            """, file: "t.toml")
        #expect(c.sshAgent == .init(socket: "/run/stepsign/agent.sock", namespaces: ["git"], allowAuthentication: true,
                                    unlockSeconds: 60, maxUses: 5))
        for (text, key) in [("socket = \"agent.sock\"", "ssh_agent.socket"), ("namespaces = [\"a b\"]", "ssh_agent.namespaces"),
                            ("namespaces = [\"\"]", "ssh_agent.namespaces"), ("unlock_seconds = 0", "ssh_agent.unlock_seconds"),
                            ("max_uses = 0", "ssh_agent.max_uses"), ("sockets = \"/x\"", "ssh_agent.sockets")] {
            #expect(throws: ConfigError.self, "\(text)") { try StepSignConfiguration.parse("[ssh_agent]\n\(text)\n", file: "t.toml") }
            do { _ = try StepSignConfiguration.parse("[ssh_agent]\n\(text)\n", file: "t.toml") } catch {
                #expect(error.key == key, "\(text): \(error)")
            }
        }
    }

    // MARK: The shipped files

    @Test func theDocumentedConfigFileEqualsTheDefaults() throws {
        let path = Self.packageRoot.appendingPathComponent("config/stepsignd.toml").path
        #expect(try StepSignConfiguration.load(contentsOf: path) == .default)
    }

    @Test func theDocumentedConfigFileSetsEveryKey() throws {
        let path = Self.packageRoot.appendingPathComponent("config/stepsignd.toml").path
        let root = try TOMLDocument.parse(String(contentsOfFile: path, encoding: .utf8)).root
        let password = try #require(root["password"]?.table)
        #expect(root.keys == ["instance", "server", "access", "storage", "signing", "password", "forgot_password", "lda", "ledger", "metrics", "ssh_agent", "cluster", "idv", "log", "stepup"])
        #expect(root["metrics"]?.table?.keys == ["listen"])
        #expect(root["ssh_agent"]?.table?.keys == ["socket", "namespaces", "allow_authentication", "unlock_seconds", "max_uses"])
        #expect(root["stepup"]?.table?.keys.count == 4)
        #expect(root["ledger"]?.table?.keys.count == 6)
        #expect(root["cluster"]?.table?.keys == ["root_key"])
        #expect(root["storage"]?.table?.keys == ["backend"])
        #expect(root["server"]?.table?.keys.count == 9)
        #expect(root["lda"]?.table?.keys.count == 5)
        #expect(root["access"]?.table?.keys.count == 4)
        #expect(password.keys.count == 11)
        #expect(password["policy"]?.table?.keys == PasswordPolicyRule.allCases.map(\.sdkName))
        #expect(root["forgot_password"]?.table?.keys.count == 6)
        #expect(root["idv"]?.table?.keys.count == 3)
    }

    @Test func theDevConfigParses() throws {
        let path = Self.packageRoot.appendingPathComponent("config/dev.toml").path
        let c = try StepSignConfiguration.load(contentsOf: path)
        #expect(c.signing.allowLevel0)
        #expect(c.access.clientGroups == [])
        #expect(c.access.adminUIDs == [0])
        #expect(c.password.maxAgeDays == 90)
        #expect(c.password.scryptN == 16384)
        #expect(c.log.level == .info)
    }

    // MARK: A full file

    @Test func everyKeyIsReadIntoTheModel() throws {
        let text = """
            instance = "acme-signer"
            [server]
            socket = "/run/acme/s.sock"
            socket_mode = "0600"
            socket_group = "acme"
            state_dir = "/srv/acme"
            max_connections = 10
            max_connections_per_uid = 3
            idle_timeout_seconds = 60
            challenge_timeout_seconds = 120
            session_max_seconds = 3600
            [access]
            client_uids = [1000, 1001]
            client_groups = ["signers", "ops"]
            admin_uids = [0, 1002]
            admin_groups = ["wheel"]
            [signing]
            allow_level_0 = true
            [password]
            max_attempts = 5
            check_wait_seconds = 30
            block_seconds = 900
            max_age_days = 0
            history = 0
            common_passwords_file = "/etc/acme/common.txt"
            scrypt_n = 65536
            scrypt_r = 4
            scrypt_p = 2
            [password.policy]
            minL = 12
            maxL = 128
            minDg = 2
            minUc = 0
            minLc = 3
            minSc = 1
            charsNotAllowed = " '"
            Repetition = 0
            UserIDcheck = false
            SeqCheck = false
            BlackListedCommonPassword = false
            msg = "Use a long passphrase."
            [forgot_password]
            enabled = false
            code_length = 12
            code_ttl_seconds = 300
            max_attempts = 2
            notifier = ["/usr/local/bin/send-code", "--via", "mail"]
            [lda]
            enabled = false
            enroll_fresh_seconds = 60
            [idv]
            issuer = "https://idv.acme.example"
            trusted_keys = "/etc/acme/idv.jwks"
            max_age_seconds = 120
            [log]
            level = "debug"
            """
        let c = try StepSignConfiguration.parse(text, file: "full.toml")
        #expect(c == StepSignConfiguration(
            instance: "acme-signer",
            server: .init(
                socket: "/run/acme/s.sock", socketMode: 0o600, socketGroup: "acme", stateDir: "/srv/acme",
                maxConnections: 10, maxConnectionsPerUID: 3, idleTimeoutSeconds: 60, challengeTimeoutSeconds: 120,
                sessionMaxSeconds: 3600),
            access: .init(clientUIDs: [1000, 1001], clientGroups: ["signers", "ops"], adminUIDs: [0, 1002], adminGroups: ["wheel"]),
            signing: .init(allowLevel0: true),
            password: .init(
                maxAttempts: 5, checkWaitSeconds: 30, blockSeconds: 900, maxAgeDays: 0, history: 0,
                commonPasswordsFile: "/etc/acme/common.txt", scryptN: 65536, scryptR: 4, scryptP: 2,
                policy: PasswordPolicy(
                    minL: 12, maxL: 128, minDg: 2, minUc: 0, minLc: 3, minSc: 1, charsNotAllowed: " '",
                    repetition: 0, userIDCheck: false, seqCheck: false, blackListedCommonPassword: false,
                    msg: "Use a long passphrase.")),
            forgotPassword: .init(
                enabled: false, codeLength: 12, codeTTLSeconds: 300, maxAttempts: 2,
                notifier: ["/usr/local/bin/send-code", "--via", "mail"]),
            lda: .init(enabled: false, enrollFreshSeconds: 60),
            idv: .init(issuer: "https://idv.acme.example", trustedKeys: "/etc/acme/idv.jwks", maxAgeSeconds: 120),
            log: .init(level: .debug)))
    }

    @Test("server.max_connections_per_uid: default 64, 1 to 65536, independent of max_connections")
    func maxConnectionsPerUID() throws {
        #expect(StepSignConfiguration.default.server.maxConnectionsPerUID == 64)
        for value in [1, 64, 65536] {
            let c = try StepSignConfiguration.parse("[server]\nmax_connections_per_uid = \(value)\n", file: "t.toml")
            #expect(c.server.maxConnectionsPerUID == value)
            #expect(c.server.maxConnections == 256)
        }
        let above = try StepSignConfiguration.parse(
            "[server]\nmax_connections = 8\nmax_connections_per_uid = 100\n", file: "t.toml")
        #expect(above.server.maxConnections == 8 && above.server.maxConnectionsPerUID == 100)
    }

    @Test("password.check_wait_seconds: default 10, 0 to 300 (how long a right answer waits for checks in flight, SPEC §5.1)")
    func checkWaitSeconds() throws {
        #expect(StepSignConfiguration.default.password.checkWaitSeconds == 10)
        for value in [0, 10, 300] {
            let c = try StepSignConfiguration.parse("[password]\ncheck_wait_seconds = \(value)\n", file: "t.toml")
            #expect(c.password.checkWaitSeconds == value)
        }
    }

    @Test("server.session_max_seconds: default 28800, 60 to 2592000; lda.enroll_fresh_seconds: default 300, 10 to 86400")
    func loginLifetimes() throws {
        #expect(StepSignConfiguration.default.server.sessionMaxSeconds == 28800)
        #expect(StepSignConfiguration.default.lda.enrollFreshSeconds == 300)
        for value in [60, 28800, 2_592_000] {
            let c = try StepSignConfiguration.parse("[server]\nsession_max_seconds = \(value)\n", file: "t.toml")
            #expect(c.server.sessionMaxSeconds == value)
        }
        for value in [10, 300, 86400] {
            let c = try StepSignConfiguration.parse("[lda]\nenroll_fresh_seconds = \(value)\n", file: "t.toml")
            #expect(c.lda.enrollFreshSeconds == value)
        }
    }

    @Test("lda.fido2_*: the relying party \"stepsign\" and no attestation by default; each is read (SPEC 5.7)")
    func fido2Keys() throws {
        #expect(StepSignConfiguration.default.lda.fido2RPID == "stepsign")
        #expect(StepSignConfiguration.default.lda.fido2Attestation == "none")
        let c = try StepSignConfiguration.parse(
            "[lda]\nfido2_rp_id = \"sign.example.org\"\nfido2_attestation = \"direct\"\nfido2_attestation_roots = \"/etc/stepsign/fido.pem\"\n", file: "t.toml")
        #expect(c.lda.fido2RPID == "sign.example.org" && c.lda.fido2Attestation == "direct" && c.lda.fido2AttestationRoots == "/etc/stepsign/fido.pem")
    }

    @Test("scrypt memory up to exactly 256 MiB (128·N·r) is accepted")
    func scryptMemoryUpToTheLimit() throws {
        #expect(StepSignConfiguration.Password.maximumScryptMemory == 256 << 20)
        for (n, r) in [(262_144, 8), (1_048_576, 2), (65536, 32)] {
            let c = try StepSignConfiguration.parse("[password]\nscrypt_n = \(n)\nscrypt_r = \(r)\n", file: "t.toml")
            #expect(128 * c.password.scryptN * c.password.scryptR == StepSignConfiguration.Password.maximumScryptMemory)
        }
    }

    @Test(arguments: StepSignConfiguration.Log.Level.allCases)
    func everyLogLevelIsAccepted(level: StepSignConfiguration.Log.Level) throws {
        let c = try StepSignConfiguration.parse("[log]\nlevel = \"\(level.rawValue)\"\n", file: "t.toml")
        #expect(c.log.level == level)
    }

    // MARK: Bad values name file, line and key

    @Test func aStringWhereAnIntegerBelongsIsDescribedLikeACompiler() throws {
        let text = "# dev\n\n[password]\nhistory = 5\nmax_attempts = \"three\"\n"
        let error = try #require(failure(text, file: "config/dev.toml"))
        #expect(error.file == "config/dev.toml")
        #expect(error.line == 5)
        #expect(error.key == "password.max_attempts")
        #expect(error.description
            == "config/dev.toml:5: password.max_attempts: expected an integer from 1 to 100, found \"three\"")
    }

    @Test(arguments: [
        // (text, line, key, part of the message)
        ("[password]\nmax_attempts = 0\n", 2, "password.max_attempts", "from 1 to 100, found 0"),
        ("[server]\nmax_connections = true\n", 2, "server.max_connections", "found true"),
        ("[server]\nmax_connections_per_uid = 0\n", 2, "server.max_connections_per_uid", "from 1 to 65536, found 0"),
        ("[server]\nmax_connections_per_uid = 65537\n", 2, "server.max_connections_per_uid", "from 1 to 65536, found 65537"),
        ("[password]\ncheck_wait_seconds = -1\n", 2, "password.check_wait_seconds", "from 0 to 300, found -1"),
        ("[password]\ncheck_wait_seconds = 301\n", 2, "password.check_wait_seconds", "from 0 to 300, found 301"),
        ("[server]\nsession_max_seconds = 59\n", 2, "server.session_max_seconds", "from 60 to 2592000, found 59"),
        ("[server]\nsession_max_seconds = 2592001\n", 2, "server.session_max_seconds", "from 60 to 2592000"),
        ("[lda]\nenroll_fresh_seconds = 9\n", 2, "lda.enroll_fresh_seconds", "from 10 to 86400, found 9"),
        ("[lda]\nfido2_rp_id = \"\"\n", 2, "lda.fido2_rp_id", "printable ASCII"),
        ("[lda]\nfido2_rp_id = \"step sign\"\n", 2, "lda.fido2_rp_id", "printable ASCII"),
        ("[lda]\nfido2_attestation = \"indirect\"\n", 2, "lda.fido2_attestation", "\"none\" or \"direct\""),
        ("[lda]\nfido2_attestation_roots = \"roots.pem\"\n", 2, "lda.fido2_attestation_roots", "absolute path"),
        ("[server]\nsocket_mode = \"0999\"\n", 2, "server.socket_mode", "octal mode"),
        ("[server]\nsocket_mode = \"1777\"\n", 2, "server.socket_mode", "octal mode"),
        ("[server]\nsocket_mode = 0o660\n", 2, "server.socket_mode", "as a string"),
        ("[server]\nsocket = \"run/s.sock\"\n", 2, "server.socket", "absolute path"),
        ("[server]\nstate_dir = \"\"\n", 2, "server.state_dir", "absolute path"),
        ("[access]\nclient_uids = [1000,\n  -1]\n", 3, "access.client_uids", "found -1"),
        ("[access]\nclient_groups = [\"ok\", 7]\n", 2, "access.client_groups", "array of strings"),
        ("[access]\nadmin_groups = \"wheel\"\n", 2, "access.admin_groups", "array of strings"),
        ("[signing]\nallow_level_0 = \"yes\"\n", 2, "signing.allow_level_0", "expected true or false"),
        ("[password]\nscrypt_n = 30000\n", 2, "password.scrypt_n", "power of two"),
        ("[password]\nscrypt_n = 1048576\nscrypt_r = 16\n", 3, "password.scrypt_r", "MiB"),
        ("[password]\nscrypt_n = 524288\nscrypt_r = 8\n", 3, "password.scrypt_r", "512 MiB per hash (128·N·r); at most 256 MiB"),
        ("[password]\nscrypt_n = 524288\n", 2, "password.scrypt_n", "at most 256 MiB"),
        ("[password]\ncommon_passwords_file = \"common.txt\"\n", 2, "password.common_passwords_file", "absolute path"),
        ("[password.policy]\nminL = 20\nmaxL = 10\n", 2, "password.policy.minL", "must not exceed maxL"),
        ("[password.policy]\nminL = 1\nmaxL = 3\n", 3, "password.policy.maxL", "no password could comply"),
        ("[password.policy]\nRepetition = -1\n", 2, "password.policy.Repetition", "from 0 to 1024"),
        ("[password.policy]\nSeqCheck = \"true\"\n", 2, "password.policy.SeqCheck", "expected true or false"),
        ("[forgot_password]\ncode_length = 4\n", 2, "forgot_password.code_length", "from 6 to 32"),
        ("[forgot_password]\nnotifier = [\"send-code\"]\n", 2, "forgot_password.notifier", "absolute path"),
        ("[idv]\nissuer = \"https://idv\"\n", 2, "idv.trusted_keys", "required"),
        ("[log]\nlevel = \"verbose\"\n", 2, "log.level", "expected one of trace, debug, info, notice, warning, error, critical"),
        ("instance = \"\"\n", 1, "instance", "must not be empty"),
        ("server = 1\n", 1, "server", "expected a table"),
    ])
    func aBadValueIsRefusedWithFileLineAndKey(text: String, line: Int, key: String, message: String) throws {
        let error = try #require(failure("# comment\n" + text, file: "bad.toml"))
        #expect(error.file == "bad.toml")
        #expect(error.line == line + 1)
        #expect(error.key == key)
        #expect(error.message.contains(message), "\(error)")
    }

    @Test func anUnknownKeyIsRefusedWithItsLine() throws {
        let error = try #require(failure("[password]\nmax_attempts = 3\nmax_atempts = 4\n"))
        #expect(error.line == 3)
        #expect(error.key == "password.max_atempts")
        #expect(error.message.hasPrefix("unknown key"))
    }

    @Test func anUnknownTopLevelKeyIsRefused() throws {
        let error = try #require(failure("instance = \"x\"\nverbose = true\n"))
        #expect(error.line == 2)
        #expect(error.key == "verbose")
    }

    @Test func anUnknownTableIsRefusedWithItsLine() throws {
        let error = try #require(failure("[log]\nlevel = \"info\"\n\n[loging]\nlevel = \"debug\"\n"))
        #expect(error.line == 4)
        #expect(error.key == "loging")
        #expect(error.message == "unknown table [loging]")
    }

    @Test func anUnknownPolicyFieldIsRefused() throws {
        let error = try #require(failure("[password.policy]\nminl = 8\n"))
        #expect(error.line == 2)
        #expect(error.key == "password.policy.minl")
    }

    @Test func aTOMLSyntaxErrorNamesFileAndLine() throws {
        let error = try #require(failure("[server]\nsocket = \"/run/x.sock\n", file: "etc/stepsignd.toml"))
        #expect(error.line == 2)
        #expect(error.key == nil)
        #expect(error.description.hasPrefix("etc/stepsignd.toml:2: unterminated string"))
    }

    @Test func anUnreadableFileNamesTheFileWithoutALine() throws {
        do {
            _ = try StepSignConfiguration.load(contentsOf: "/nonexistent/stepsignd.toml")
            Issue.record("expected an error")
        } catch {
            #expect(error.file == "/nonexistent/stepsignd.toml")
            #expect(error.line == nil)
            #expect(error.description == "/nonexistent/stepsignd.toml: cannot read the file: it does not exist")
        }
    }

    // MARK: Reload

    @Test("a reload keeps the keys read only at start as the daemon started with them and names those the file changed")
    func restartOnlyKeysKeepTheirRunningValues() throws {
        let running = try StepSignConfiguration.parse("instance = \"a\"\n[signing]\nallow_level_0 = false\n", file: "a.toml")
        let read = try StepSignConfiguration.parse("""
            instance = "b"
            [signing]
            allow_level_0 = true
            [server]
            state_dir = "/srv/other"
            [metrics]
            listen = "127.0.0.1:9464"
            [storage.postgresql]
            host = "db.example"
            """, file: "b.toml")
        let (applied, needRestart) = read.applicable(whileRunning: running)
        #expect(needRestart == ["instance", "server.state_dir", "metrics.listen", "storage.postgresql.host"])
        #expect(applied.signing.allowLevel0)
        #expect(applied.instance == "a" && applied.server == running.server && applied.metrics == running.metrics
                && applied.storage == running.storage)
        #expect(running.applicable(whileRunning: running).needRestart.isEmpty)
    }
}
