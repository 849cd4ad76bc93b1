import Foundation
import StepSignProtocol

// Reading each table of the config file into the model, with the checks documented on the
// model's properties.

extension StepSignConfiguration {
    init(_ root: ConfigTableReader) throws(ConfigError) {
        try root.rejectUnknown([
            "instance", "server", "access", "signing", "password", "forgot_password", "lda", "idv", "log",
            "ledger", "storage", "cluster", "witness", "stepup", "approval", "metrics", "ssh_agent",
        ])
        let d = StepSignConfiguration.default
        let witnesses = try Witness.all(root)
        let ledger = try root.table("ledger")
        let parsedLedger = try Ledger(ledger)
        guard parsedLedger.witnessQuorum <= witnesses.count else {
            throw ledger.error("witness_quorum", ledger.table["witness_quorum"],
                               "is more than the \(witnesses.count) [[witness]] configured")
        }
        self.init(
            instance: try root.string("instance", default: d.instance, check: Check.nonEmptyLine),
            server: try Server(try root.table("server")),
            access: try Access(try root.table("access")),
            signing: try Signing(try root.table("signing")),
            password: try Password(try root.table("password")),
            forgotPassword: try ForgotPassword(try root.table("forgot_password")),
            lda: try LDA(try root.table("lda")),
            idv: try IDV(try root.table("idv")),
            log: try Log(try root.table("log")),
            ledger: parsedLedger,
            storage: try Storage(try root.table("storage")),
            cluster: try Cluster(try root.table("cluster")),
            witnesses: witnesses,
            stepUp: try StepUp(try root.table("stepup")),
            approvals: try ApprovalRule.all(root),
            metrics: try Metrics(try root.table("metrics")),
            sshAgent: try SSHAgent(try root.table("ssh_agent"))
        )
    }
}

extension StepSignConfiguration.Server {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown([
            "socket", "socket_mode", "socket_group", "state_dir", "max_connections",
            "max_connections_per_uid", "idle_timeout_seconds", "challenge_timeout_seconds", "session_max_seconds",
        ])
        let d = Self()
        if let mode = t.table["socket_mode"], mode.string == nil {
            throw t.error("socket_mode", mode, "expected an octal mode as a string, such as \"0660\", found \(mode)")
        }
        let modeText = try t.string("socket_mode", default: "0660") { s in
            Check.octalMode(s) == nil ? "expected an octal mode from \"000\" to \"0777\", such as \"0660\"" : nil
        }
        self.init(
            socket: try t.string("socket", default: d.socket) { s in
                Check.absolutePath(s) ?? (s.utf8.count > 107 ? "must be at most 107 bytes long (sun_path)" : nil)
            },
            socketMode: Check.octalMode(modeText) ?? d.socketMode,
            socketGroup: try t.string("socket_group", default: d.socketGroup, check: Check.nameOrEmpty),
            stateDir: try t.string("state_dir", default: d.stateDir, check: Check.absolutePath),
            maxConnections: try t.integer("max_connections", default: d.maxConnections, in: 1...65536),
            maxConnectionsPerUID: try t.integer(
                "max_connections_per_uid", default: d.maxConnectionsPerUID, in: 1...65536),
            idleTimeoutSeconds: try t.integer("idle_timeout_seconds", default: d.idleTimeoutSeconds, in: 1...86400),
            challengeTimeoutSeconds: try t.integer(
                "challenge_timeout_seconds", default: d.challengeTimeoutSeconds, in: 10...86400),
            sessionMaxSeconds: try t.integer("session_max_seconds", default: d.sessionMaxSeconds, in: 60...2_592_000)
        )
    }
}

extension StepSignConfiguration.Access {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown(["client_uids", "client_groups", "admin_uids", "admin_groups"])
        let d = Self()
        let uids: ClosedRange<UInt32> = 0...(UInt32.max - 1)
        self.init(
            clientUIDs: try t.integerArray("client_uids", default: d.clientUIDs, in: uids),
            clientGroups: try t.stringArray("client_groups", default: d.clientGroups, check: Check.name),
            adminUIDs: try t.integerArray("admin_uids", default: d.adminUIDs, in: uids),
            adminGroups: try t.stringArray("admin_groups", default: d.adminGroups, check: Check.name)
        )
    }
}

extension StepSignConfiguration.Signing {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown(["allow_level_0", "max_batch_items", "idempotency_seconds", "key_store", "pkcs11"])
        let names = KeyStore.allCases.map(\.rawValue)
        let store = try t.string("key_store", default: KeyStore.file.rawValue) { s in
            KeyStore(rawValue: s) == nil ? "expected one of \(names.joined(separator: ", ")), found \(TOMLValue.quoted(s))" : nil
        }
        let keyStore = KeyStore(rawValue: store) ?? .file
        let pkcs11 = try PKCS11(try t.table("pkcs11"))
        if keyStore == .pkcs11, pkcs11.module.isEmpty {
            throw t.error("key_store", t.table["key_store"], "\"pkcs11\" needs [signing.pkcs11] module, the token's PKCS#11 module")
        }
        self.init(allowLevel0: try t.bool("allow_level_0", default: Self().allowLevel0),
                  maxBatchItems: try t.integer("max_batch_items", default: Self().maxBatchItems,
                                               in: 1...Self.maximumBatchItems),
                  idempotencySeconds: try t.integer("idempotency_seconds", default: Self().idempotencySeconds,
                                                    in: 60...Self.maximumIdempotencySeconds),
                  keyStore: keyStore, pkcs11: pkcs11)
    }
}

extension StepSignConfiguration.Signing.PKCS11 {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        for secret in ["pin", "user_pin", "password"] where t.table[secret] != nil {
            throw t.error(secret, t.table[secret],
                          "the token's PIN is never in the config file: put it in a file named by pin_file, or in the systemd credential \(Self.pinCredentialName)")
        }
        try t.rejectUnknown(["module", "token_label", "pin_file", "max_sessions"])
        let d = Self()
        self.init(
            module: try t.string("module", default: d.module) { s in s.isEmpty ? nil : Check.absolutePath(s) },
            tokenLabel: try t.string("token_label", default: d.tokenLabel) { s in
                s.utf8.count > 32 ? "a token label is at most 32 bytes" : (s.isEmpty ? nil : Check.nonEmptyLine(s))
            },
            pinFile: try t.string("pin_file", default: d.pinFile) { s in s.isEmpty ? nil : Check.absolutePath(s) },
            maxSessions: try t.integer("max_sessions", default: d.maxSessions, in: 1...256)
        )
    }
}

extension StepSignConfiguration.Password {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown([
            "max_attempts", "max_checks_per_uid", "check_wait_seconds", "block_seconds", "max_age_days", "history", "common_passwords_file",
            "scrypt_n", "scrypt_r", "scrypt_p", "policy",
        ])
        let d = Self()
        let scryptN = try t.integer("scrypt_n", default: d.scryptN, in: 1024...1_048_576)
        if scryptN & (scryptN - 1) != 0 {
            throw t.error("scrypt_n", t.table["scrypt_n"], "expected a power of two from 1024 to 1048576, found \(scryptN)")
        }
        let scryptR = try t.integer("scrypt_r", default: d.scryptR, in: 1...32)
        let limit = StepSignConfiguration.Password.maximumScryptMemory
        let memory = 128 * scryptN * scryptR
        if memory > limit {
            let key = t.table["scrypt_r"] != nil ? "scrypt_r" : "scrypt_n"
            throw t.error(key, t.table[key], "scrypt_n × scrypt_r needs \(memory >> 20) MiB per hash (128·N·r); at most \(limit >> 20) MiB is allowed")
        }
        self.init(
            maxAttempts: try t.integer("max_attempts", default: d.maxAttempts, in: 1...100),
            maxChecksPerUID: try t.integer("max_checks_per_uid", default: d.maxChecksPerUID, in: 1...1024),
            checkWaitSeconds: try t.integer("check_wait_seconds", default: d.checkWaitSeconds, in: 0...300),
            blockSeconds: try t.integer("block_seconds", default: d.blockSeconds, in: 0...31_536_000),
            maxAgeDays: try t.integer("max_age_days", default: d.maxAgeDays, in: 0...3650),
            history: try t.integer("history", default: d.history, in: 0...100),
            commonPasswordsFile: try t.string(
                "common_passwords_file", default: d.commonPasswordsFile,
                check: { $0.isEmpty ? nil : Check.absolutePath($0) }),
            scryptN: scryptN,
            scryptR: scryptR,
            scryptP: try t.integer("scrypt_p", default: d.scryptP, in: 1...16),
            policy: try PasswordPolicy(try t.table("policy"))
        )
    }
}

extension PasswordPolicy {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown(PasswordPolicyRule.allCases.map(\.sdkName))
        let d = PasswordPolicy.default
        func int(_ rule: PasswordPolicyRule, _ def: Int, _ range: ClosedRange<Int>) throws(ConfigError) -> Int {
            try t.integer(rule.sdkName, default: def, in: range)
        }
        func bool(_ rule: PasswordPolicyRule, _ def: Bool) throws(ConfigError) -> Bool {
            try t.bool(rule.sdkName, default: def)
        }
        let policy = PasswordPolicy(
            minL: try int(.minL, d.minL, 1...1024),
            maxL: try int(.maxL, d.maxL, 1...1024),
            minDg: try int(.minDg, d.minDg, 0...1024),
            minUc: try int(.minUc, d.minUc, 0...1024),
            minLc: try int(.minLc, d.minLc, 0...1024),
            minSc: try int(.minSc, d.minSc, 0...1024),
            charsNotAllowed: try t.string(PasswordPolicyRule.charsNotAllowed.sdkName, default: d.charsNotAllowed),
            repetition: try int(.repetition, d.repetition, 0...1024),
            userIDCheck: try bool(.userIDCheck, d.userIDCheck),
            seqCheck: try bool(.seqCheck, d.seqCheck),
            blackListedCommonPassword: try bool(.blackListedCommonPassword, d.blackListedCommonPassword),
            msg: try t.string(PasswordPolicyRule.msg.sdkName, default: d.msg)
        )
        /// Reports at the first of `rules` that the file sets, else at the table.
        func fail(_ rules: [PasswordPolicyRule], _ message: String) -> ConfigError {
            let rule = rules.first(where: { t.table[$0.sdkName] != nil }) ?? rules[0]
            return t.error(rule.sdkName, t.table[rule.sdkName], message)
        }
        if policy.minL > policy.maxL {
            throw fail([.minL, .maxL], "minL (\(policy.minL)) must not exceed maxL (\(policy.maxL))")
        }
        let required = policy.minDg + policy.minUc + policy.minLc + policy.minSc
        if required > policy.maxL {
            throw fail(
                [.minDg, .minUc, .minLc, .minSc, .maxL],
                "minDg + minUc + minLc + minSc (\(required)) must not exceed maxL (\(policy.maxL)); no password could comply")
        }
        self = policy
    }
}

extension StepSignConfiguration.ForgotPassword {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown([
            "enabled", "code_length", "code_ttl_seconds", "max_attempts", "max_codes_per_hour", "notifier",
        ])
        let d = Self()
        let notifier = try t.stringArray("notifier", default: d.notifier) { s in
            s.isEmpty ? "must not hold an empty argument" : nil
        }
        if let program = notifier.first, let complaint = Check.absolutePath(program) {
            throw t.error("notifier", t.table["notifier"]?.array?.first, "the program (first element) \(complaint)")
        }
        self.init(
            enabled: try t.bool("enabled", default: d.enabled),
            codeLength: try t.integer("code_length", default: d.codeLength, in: 6...32),
            codeTTLSeconds: try t.integer("code_ttl_seconds", default: d.codeTTLSeconds, in: 60...86400),
            maxAttempts: try t.integer("max_attempts", default: d.maxAttempts, in: 1...100),
            maxCodesPerHour: try t.integer("max_codes_per_hour", default: d.maxCodesPerHour, in: 1...100),
            notifier: notifier
        )
    }
}

extension StepSignConfiguration.LDA {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown(["enabled", "enroll_fresh_seconds", "fido2_rp_id", "fido2_attestation", "fido2_attestation_roots"])
        let d = Self()
        let rpID = try t.string("fido2_rp_id", default: d.fido2RPID) { id in
            !id.isEmpty && id.utf8.count <= 253 && id.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f })
                ? nil : "must be 1 to 253 printable ASCII characters (a domain-like name)"
        }
        let attestation = try t.string("fido2_attestation", default: d.fido2Attestation) {
            ["none", "direct"].contains($0) ? nil : "must be \"none\" or \"direct\""
        }
        self.init(
            enabled: try t.bool("enabled", default: d.enabled),
            enrollFreshSeconds: try t.integer("enroll_fresh_seconds", default: d.enrollFreshSeconds, in: 10...86400),
            fido2RPID: rpID,
            fido2Attestation: attestation,
            fido2AttestationRoots: try t.string("fido2_attestation_roots", default: d.fido2AttestationRoots) { text in
                text.isEmpty || text.hasPrefix("/") || text.contains("-----BEGIN CERTIFICATE-----")
                    ? nil : "expected PEM certificates, or the absolute path of a file holding them"
            }
        )
    }
}

extension StepSignConfiguration.IDV {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown(["issuer", "trusted_keys", "max_age_seconds"])
        let d = Self()
        let issuer = try t.string("issuer", default: d.issuer)
        let trustedKeys = try t.string("trusted_keys", default: d.trustedKeys) { s in
            s.isEmpty ? nil : Check.absolutePath(s)
        }
        if !issuer.isEmpty && trustedKeys.isEmpty {
            throw t.error("trusted_keys", t.table["trusted_keys"] ?? t.table["issuer"], "is required when idv.issuer is set")
        }
        self.init(
            issuer: issuer,
            trustedKeys: trustedKeys,
            maxAgeSeconds: try t.integer("max_age_seconds", default: d.maxAgeSeconds, in: 1...86400)
        )
    }
}

extension StepSignConfiguration.Log {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown(["level"])
        let names = Level.allCases.map(\.rawValue)
        let text = try t.string("level", default: Self().level.rawValue) { s in
            Level(rawValue: s) == nil ? "expected one of \(names.joined(separator: ", ")), found \(TOMLValue.quoted(s))" : nil
        }
        self.init(level: Level(rawValue: text) ?? .info)
    }
}

/// Checks of string values: each returns a complaint, or nil when the value is fine.
enum Check {
    static func absolutePath(_ s: String) -> String? {
        s.hasPrefix("/") ? nil : "expected an absolute path, found \(TOMLValue.quoted(s))"
    }

    static func nonEmptyLine(_ s: String) -> String? {
        if s.isEmpty { return "must not be empty" }
        if s.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "must not contain control characters"
        }
        return nil
    }

    /// Whether `s` is in Unicode NFC: names are stored and compared byte-wise (SPEC §3).
    static func isNFC(_ s: String) -> Bool {
        s.utf8.elementsEqual(s.precomposedStringWithCanonicalMapping.utf8)
    }

    /// A user or group name: not empty, no whitespace, ":" or "/", no control characters.
    static func name(_ s: String) -> String? {
        if s.isEmpty { return "expected a name, found \"\"" }
        if s.unicodeScalars.contains(where: {
            $0.properties.isWhitespace || $0 == ":" || $0 == "/" || $0.properties.generalCategory == .control
        }) {
            return "expected a name without spaces, \":\" or \"/\", found \(TOMLValue.quoted(s))"
        }
        return nil
    }

    static func nameOrEmpty(_ s: String) -> String? {
        s.isEmpty ? nil : name(s)
    }

    /// "0660" → 0o660; 1 to 4 octal digits, at most 0o777.
    static func octalMode(_ s: String) -> UInt16? {
        guard (1...4).contains(s.count), s.allSatisfy({ ("0"..."7").contains($0) }),
              let mode = UInt16(s, radix: 8), mode <= 0o777
        else { return nil }
        return mode
    }
}
