import ArgumentParser
import StepSignClient
import StepSignProtocol
import Foundation

/// `stepsign admin ...`: user, key and audit administration (admin peers only).
struct AdminCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin", abstract: "Administer users, keys and the ledger.",
        subcommands: [User.self, GroupCommand.self, Key.self, LogKeyCommand.self, ClusterCommand.self, Audit.self, BackupCommand.self, RecoverCommand.self, MigrateCommand.self]
    )

    struct User: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "user", abstract: "Manage users.",
            subcommands: [Add.self, Remove.self, Unlock.self, Expire.self, List.self]
        )

        struct Add: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Add a user; the password must meet the policy.")
            @OptionGroup var global: GlobalOptions
            @Option(help: "The user ID.") var user: String
            @Option(name: .customLong("password-file"), help: ArgumentHelp("Read the password from a file (first line; - is stdin).", valueName: "file"))
            var passwordFile: String?
            @Option(name: .customLong("password-fd"), help: ArgumentHelp("Read the password from a file descriptor (one line).", valueName: "fd"))
            var passwordFD: Int32?
            @Flag(name: .customLong("must-change-password"), help: "Make the user change the password at first login.")
            var mustChangePassword = false

            func validate() throws {
                try SecretSources.validate(["--password-file": passwordFile], ["--password-fd": passwordFD])
            }

            func run() throws {
                try runReportingErrors {
                    // The permission first (issue 39): a caller who may not add users hears so
                    // before typing the new password twice.
                    let connection = try global.connect()
                    try requireAdmin(connection, for: "admin.addUser")
                    let reader = PasswordReader(file: passwordFile, descriptor: passwordFD)
                    let password = try reader.readConfirmed(prompt: "New password for \(user): ", again: "Again: ")
                    _ = try connection.call("admin.addUser", [
                        "user": user, "password": password, "mustChangePassword": mustChangePassword,
                    ]).requireAccepted("admin.addUser")
                    print("added \(user)")
                }
            }
        }

        struct Remove: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove a user.")
            @OptionGroup var global: GlobalOptions
            @Option(help: "The user ID.") var user: String
            func run() throws { try simpleUserOp("admin.removeUser", user, global, done: "removed") }
        }

        struct Unlock: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Unblock a user and reset the attempt counter.")
            @OptionGroup var global: GlobalOptions
            @Option(help: "The user ID.") var user: String
            func run() throws { try simpleUserOp("admin.unlockUser", user, global, done: "unlocked") }
        }

        struct Expire: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Expire a user's password now.")
            @OptionGroup var global: GlobalOptions
            @Option(help: "The user ID.") var user: String
            func run() throws { try simpleUserOp("admin.expirePassword", user, global, done: "expired the password of") }
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "List users.",
                discussion: "--json prints an array of {user, blocked, passwordExpired, deviceKeys}.")
            @OptionGroup var global: GlobalOptions
            @OptionGroup var output: JSONFlag
            func run() throws {
                try runReportingErrors {
                    let reply = try global.connect().call("admin.listUsers").requireAccepted("admin.listUsers")
                    let users = reply.result?["users"]?.arrayValue ?? []
                    if output.json {
                        JSONOutput.print(.array(users.map { JSONOutput.withFields($0, ["user", "blocked", "passwordExpired", "deviceKeys"]) }))
                        return
                    }
                    if users.isEmpty { print("no users") }
                    for user in users {
                        var notes: [String] = []
                        if user["blocked"]?.boolValue == true { notes.append("blocked") }
                        if user["passwordExpired"]?.boolValue == true { notes.append("password expired") }
                        let devices = (user["deviceKeys"]?.arrayValue?.compactMap(\.stringValue))?.count ?? 0
                        notes.append(devices == 1 ? "1 device key" : "\(devices) device keys")
                        print("\(user["user"]?.stringValue ?? "?"): \(notes.joined(separator: ", "))")
                    }
                }
            }
        }
    }

    struct Key: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "key", abstract: "Manage signing keys.",
                                                        subcommands: [Rotate.self, Revoke.self, List.self])

        struct Rotate: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Make a new key the active signer.",
                                                            discussion: "Prints the new active kid; --json prints {activeKid}.")
            @OptionGroup var global: GlobalOptions
            @OptionGroup var output: JSONFlag
            func run() throws {
                try runReportingErrors {
                    let reply = try global.connect().call("admin.rotateKey").requireAccepted("admin.rotateKey")
                    printActiveKid(reply.result, json: output.json)
                }
            }
        }

        struct Revoke: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Withdraw a compromised key: it leaves the published keys and its signatures stop verifying.",
                discussion: "If it is the active key, a new key is made active first. Prints the active kid; --json prints {activeKid}."
            )
            @OptionGroup var global: GlobalOptions
            // A kid is base64url, so one in 64 begins with '-'. Read as a plain argument, such a
            // kid is taken for options (`-…h…` even for --help): every input no option claims
            // is collected instead, and exactly one must be given.
            @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The kid of the key to revoke (it may begin with '-').", valueName: "kid"))
            var kids: [String] = []
            @OptionGroup var output: JSONFlag
            var kid: String { kids[0] }
            func validate() throws {
                guard kids.count == 1 else { throw ValidationError("give exactly one kid (as `stepsign admin key list` shows it)") }
            }
            func run() throws {
                try runReportingErrors {
                    let reply = try global.connect().call("admin.revokeKey", ["kid": kid]).requireAccepted("admin.revokeKey")
                    printActiveKid(reply.result, json: output.json)
                }
            }
        }
        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "List signing keys.",
                discussion: """
                    Each key says where its private half lives: "file" (keys/KID.pem), "pkcs11" (a token; \
                    keys/ holds only its CKA_ID and public half), or nothing for another instance's key. \
                    --json prints an array of {kid, active, revoked, createdAt, instance, trusted, trust, keyStore}.
                    """)
            @OptionGroup var global: GlobalOptions
            @OptionGroup var output: JSONFlag
            func run() throws {
                try runReportingErrors {
                    let reply = try global.connect().call("admin.listKeys").requireAccepted("admin.listKeys")
                    let keys = reply.result?["keys"]?.arrayValue ?? []
                    if output.json {
                        JSONOutput.print(.array(keys.map { JSONOutput.withFields($0, ["kid", "active", "revoked", "createdAt", "instance", "trusted", "trust", "keyStore"]) }))
                        return
                    }
                    for key in keys {
                        let state = key["revoked"]?.boolValue == true ? "revoked" : key["active"]?.boolValue == true ? "active" : "retired"
                        let created = (key["createdAt"]?.int).map { ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval($0))) } ?? "?"
                        let trust = key["trust"]?.stringValue ?? "?"
                        let location = key["keyStore"]?.stringValue.map { ", in \($0 == "pkcs11" ? "the PKCS#11 token" : "a key file")" } ?? ""
                        print("\(key["kid"]?.stringValue ?? "?")  \(state), created \(created) by \(key["instance"]?.stringValue ?? "?"), \(trust)\(location)")
                    }
                    if let logKeyStore = reply.result?["logKeyStore"]?.stringValue {
                        print("log key: \(logKeyStore == "pkcs11" ? "in the PKCS#11 token" : "a key file")")
                    }
                }
            }
        }
    }

    struct Audit: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "audit", abstract: "Check or export the ledger.",
                                                        subcommands: [Verify.self, Export.self])

        struct Verify: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Walk the ledger's hash chain in the daemon.",
                discussion: """
                    --json prints {ok, entries, firstBadSeq, checkpoints, problem, events}, the fields of \
                    stepsign-verify ledger --json (null where there is nothing to say). Exits 1 \
                    if the ledger does not verify.
                    """)
            @OptionGroup var global: GlobalOptions
            @OptionGroup var output: JSONFlag
            func run() throws {
                try runReportingErrors {
                    // Every signature is verified: a million entries take minutes, not the default 60 s.
                    let reply = try global.connect().call("admin.auditVerify", timeout: 24 * 3600)
                        .requireAccepted("admin.auditVerify")
                    // The fields stepsign-verify ledger --json reports too; the untrusted keys
                    // are shown by `stepsign admin key list`.
                    let result = JSONOutput.only(reply.result ?? [:], ["ok", "entries", "firstBadSeq", "checkpoints", "problem", "events"])
                    let ok = result["ok"]?.boolValue == true
                    if output.json {
                        JSONOutput.print(result)
                    } else if ok {
                        let entries = result["entries"]?.int ?? 0, checkpoints = result["checkpoints"]?.int ?? 0
                        let events = result["events"]?.int ?? 0
                        print("ledger ok: \(entries) \(entries == 1 ? "entry" : "entries") checked "
                              + "(\(entries - events) \(entries - events == 1 ? "signature" : "signatures"), "
                              + "\(events) \(events == 1 ? "event" : "events")), "
                              + "\(checkpoints) \(checkpoints == 1 ? "checkpoint" : "checkpoints")")
                    } else {
                        let seq = (result["firstBadSeq"]?.int).map { "first bad seq \($0): " } ?? ""
                        let entries = result["entries"]?.int ?? 0
                        print("ledger broken: \(seq)\(result["problem"]?.stringValue ?? "") "
                              + "(\(entries) \(entries == 1 ? "entry" : "entries") checked)")
                    }
                    guard ok else { throw ExitCode(1) }
                }
            }
        }

        struct Export: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Write the ledger as JSON lines to stdout.",
                discussion: "Progress goes to stderr, and only when stderr is a terminal."
            )
            @OptionGroup var global: GlobalOptions
            @Option(help: "Entries per request (1 to 10000).") var pageSize: Int = 1000

            func validate() throws {
                guard (1...10_000).contains(pageSize) else { throw ValidationError("--page-size must be 1 to 10000") }
            }

            func run() throws {
                try runReportingErrors {
                    let connection = try global.connect()
                    let progress = isatty(STDERR_FILENO) == 1
                    var after = 0
                    var exported = 0
                    defer { if progress, exported > 0 { FileHandle.standardError.write(Data("\n".utf8)) } }
                    while true {
                        let reply = try connection.call("admin.exportLedger", ["afterSeq": after, "limit": pageSize])
                            .requireAccepted("admin.exportLedger")
                        let entries = reply.result?["entries"]?.arrayValue ?? []
                        for entry in entries { JSONOutput.print(entry) }
                        // Checkpoint lines follow their page's entries (stepsign-verify ledger reads both).
                        for checkpoint in reply.result?["checkpoints"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
                            JSONOutput.print(["checkpoint": .string(checkpoint)])
                        }
                        for note in reply.result?["logCheckpoints"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
                            JSONOutput.print(["logCheckpoint": .string(note)])
                        }
                        exported += entries.count
                        if progress { FileHandle.standardError.write(Data("\rexported \(exported) entries".utf8)) }
                        guard let last = entries.last?["seq"]?.int, entries.count == pageSize else { return }
                        after = last
                    }
                }
            }
        }
    }
}

/// Prints the `activeKid` of `result`: the kid alone, or `{activeKid}` as JSON.
private func printActiveKid(_ result: JSONValue?, json: Bool) {
    let kid = result?["activeKid"]?.stringValue
    if json {
        JSONOutput.print(["activeKid": kid.map { .string($0) } ?? .null])
    } else {
        print("active key \(kid ?? "?")")
    }
}

private func simpleUserOp(_ op: String, _ user: String, _ global: GlobalOptions, done: String) throws {
    try runReportingErrors {
        _ = try global.connect().call(op, ["user": user]).requireAccepted(op)
        print("\(done) \(user)")
    }
}

/// Asks the daemon whether this caller is an admin, with the cheapest admin operation there is
/// (`admin.listKeys`: a few keys, nothing written), before a command asks anyone to type a
/// secret: a caller who is not gets `op`'s refusal at once, error 13 and what it means.
/// Anything else (the daemon busy, say) is left for `op` itself to report.
func requireAdmin(_ connection: StepSignConnection, for op: String) throws {
    let probe = try connection.call("admin.listKeys")
    guard probe.code == 13 else { return }
    throw CLIError("\(op) refused: error 13: \(probe.message) (only an admin may: [access] admin_uids or admin_groups)")
}
