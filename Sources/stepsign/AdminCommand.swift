import ArgumentParser
import Foundation

/// `stepsign admin ...`: user, key and audit administration (admin peers only).
struct AdminCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin", abstract: "Administer users, keys and the ledger.",
        subcommands: [User.self, Key.self, Audit.self]
    )

    struct User: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "user", abstract: "Manage users.",
            subcommands: [Add.self, Remove.self, Unlock.self, Expire.self, List.self]
        )

        struct Add: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Add a user; the password must meet the policy.")
            @OptionGroup var global: GlobalOptions
            @Argument(help: "The user ID.") var user: String
            @Option(name: .customLong("password-file"), help: "Read the password from a file (first line).") var passwordFile: String?
            @Option(name: .customLong("password-fd"), help: "Read the password from a file descriptor.") var passwordFD: Int32?
            @Flag(name: .customLong("must-change-password"), help: "Make the user change the password at first login.")
            var mustChangePassword = false

            func run() throws {
                try runReportingErrors {
                    let reader = PasswordReader(file: passwordFile, descriptor: passwordFD)
                    let password = try reader.read(prompt: "New password for \(user): ")
                    if !reader.isScripted {
                        guard try PasswordReader.readFromTerminal(prompt: "Again: ") == password else {
                            throw CLIError("the passwords do not match", exitCode: 2)
                        }
                    }
                    _ = try global.connect().call("admin.addUser", [
                        "user": user, "password": password, "mustChangePassword": mustChangePassword,
                    ]).requireAccepted("admin.addUser")
                    print("added \(user)")
                }
            }
        }

        struct Remove: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove a user.")
            @OptionGroup var global: GlobalOptions
            @Argument(help: "The user ID.") var user: String
            func run() throws { try simpleUserOp("admin.removeUser", user, global, done: "removed") }
        }

        struct Unlock: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Unblock a user and reset the attempt counter.")
            @OptionGroup var global: GlobalOptions
            @Argument(help: "The user ID.") var user: String
            func run() throws { try simpleUserOp("admin.unlockUser", user, global, done: "unlocked") }
        }

        struct Expire: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Expire a user's password now.")
            @OptionGroup var global: GlobalOptions
            @Argument(help: "The user ID.") var user: String
            func run() throws { try simpleUserOp("admin.expirePassword", user, global, done: "expired the password of") }
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List users.")
            @OptionGroup var global: GlobalOptions
            func run() throws {
                try runReportingErrors {
                    let reply = try global.connect().call("admin.listUsers").requireAccepted("admin.listUsers")
                    JSONOutput.print(reply.result?["users"] ?? [])
                }
            }
        }
    }

    struct Key: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "key", abstract: "Manage signing keys.",
                                                        subcommands: [Rotate.self, Revoke.self, List.self])

        struct Rotate: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Make a new key the active signer.")
            @OptionGroup var global: GlobalOptions
            func run() throws {
                try runReportingErrors {
                    let reply = try global.connect().call("admin.rotateKey").requireAccepted("admin.rotateKey")
                    print(reply.result?["activeKid"] as? String ?? "")
                }
            }
        }

        struct Revoke: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Withdraw a compromised key: it leaves the published keys and its signatures stop verifying.",
                discussion: "If it is the active key, a new key is made active first. Prints the active kid."
            )
            @OptionGroup var global: GlobalOptions
            @Argument(help: "The kid of the key to revoke.") var kid: String
            func run() throws {
                try runReportingErrors {
                    let reply = try global.connect().call("admin.revokeKey", ["kid": kid]).requireAccepted("admin.revokeKey")
                    print(reply.result?["activeKid"] as? String ?? "")
                }
            }
        }
        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List signing keys: kid, active, revoked, createdAt, instance.")
            @OptionGroup var global: GlobalOptions
            func run() throws {
                try runReportingErrors {
                    let reply = try global.connect().call("admin.listKeys").requireAccepted("admin.listKeys")
                    JSONOutput.print(reply.result?["keys"] ?? [])
                }
            }
        }
    }

    struct Audit: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "audit", abstract: "Check or export the ledger.",
                                                        subcommands: [Verify.self, Export.self])

        struct Verify: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Walk the ledger's hash chain in the daemon.")
            @OptionGroup var global: GlobalOptions
            func run() throws {
                try runReportingErrors {
                    // Every signature is verified: a million entries take minutes, not the default 60 s.
                    let reply = try global.connect().call("admin.auditVerify", timeout: 24 * 3600)
                        .requireAccepted("admin.auditVerify")
                    JSONOutput.print(reply.result ?? [:])
                    guard reply.result?["ok"] as? Bool == true else {
                        throw CLIError("the ledger does not verify: \(reply.result?["problem"] as? String ?? "see above")")
                    }
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
                        let entries = reply.result?["entries"] as? [[String: Any]] ?? []
                        for entry in entries { JSONOutput.print(entry) }
                        // Checkpoint lines follow their page's entries (stepsign-verify ledger reads both).
                        for checkpoint in reply.result?["checkpoints"] as? [String] ?? [] {
                            JSONOutput.print(["checkpoint": checkpoint])
                        }
                        exported += entries.count
                        if progress { FileHandle.standardError.write(Data("\rexported \(exported) entries".utf8)) }
                        guard let last = entries.last?["seq"] as? Int, entries.count == pageSize else { return }
                        after = last
                    }
                }
            }
        }
    }
}

private func simpleUserOp(_ op: String, _ user: String, _ global: GlobalOptions, done: String) throws {
    try runReportingErrors {
        _ = try global.connect().call(op, ["user": user]).requireAccepted(op)
        print("\(done) \(user)")
    }
}
