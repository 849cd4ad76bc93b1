import ArgumentParser
import Foundation
import StepSignCrypto
import StepSignFormat
import StepSignProtocol

/// `stepsign admin cluster ...`: the operator's cluster root key and the endorsements that
/// make one daemon's keys trusted by the others (SPEC §5.4).
struct ClusterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster", abstract: "Cluster trust: the root key and key endorsements (PostgreSQL clusters).",
        subcommands: [RootKey.self, Endorse.self, SealKey.self]
    )

    /// Creates `path` with mode 0600 (never over an existing file, never through a link) and
    /// writes `bytes` to it durably.
    static func writeNewPrivateFile(_ path: String, _ bytes: [UInt8]) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw CLIError("cannot create \(path): \(String(cString: strerror(errno)))", exitCode: CLIError.usage)
        }
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(fd) == 0 else {
            unlink(path)
            throw CLIError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }

    struct SealKey: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "seal-key",
                                                        abstract: "The seal key of the credential records (PostgreSQL clusters).",
                                                        subcommands: [New.self])

        struct New: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Make a new seal key for a PostgreSQL cluster.",
                discussion: """
                    Writes 32 random bytes as one line of base64url to FILE (mode 0600; an existing file \
                    is never overwritten). Give every host the same file, as storage.seal_key_file or as \
                    the systemd credential stepsign-seal-key (SPEC 5.4). Whoever reads it can seal a \
                    credential record they wrote into the database: keep it like a private key, and \
                    outside the database's backups.
                    """)
            @Option(name: .long, help: ArgumentHelp("Where to write the key.", valueName: "file"))
            var out: String

            func run() throws {
                try runReportingErrors {
                    let key = try SecureRandom.bytes(count: 32)
                    try ClusterCommand.writeNewPrivateFile(out, Array((Base64URL.encode(key) + "\n").utf8))
                    FileHandle.standardError.write(Data("""
                        stepsign: wrote a new seal key to \(out); give every host of the cluster the same one \
                        (storage.seal_key_file or the credential stepsign-seal-key)

                        """.utf8))
                }
            }
        }
    }

    struct RootKey: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "root-key", abstract: "The cluster root key.",
                                                        subcommands: [New.self])

        struct New: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Make a new cluster root key.",
                discussion: """
                    Writes the private key to FILE (PKCS#8 PEM, mode 0600; an existing file is never \
                    overwritten) and prints the public key for every host's [cluster] root_key. Keep \
                    the private key offline: whoever holds it can make any key trusted.
                    """)
            @Option(name: .long, help: ArgumentHelp("Where to write the private key.", valueName: "file"))
            var out: String

            func run() throws {
                try runReportingErrors {
                    let key = try P256PrivateKey.generate()
                    try ClusterCommand.writeNewPrivateFile(out, Array(try key.pkcs8PEM().utf8))
                    print(key.publicKey.spkiPEM, terminator: key.publicKey.spkiPEM.hasSuffix("\n") ? "" : "\n")
                    FileHandle.standardError.write(Data("""
                        stepsign: wrote the cluster root private key to \(out) (kid \(key.publicKey.thumbprint)); \
                        put the public key above in [cluster] root_key on every host, and keep the private key offline

                        """.utf8))
                }
            }
        }
    }

    struct Endorse: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Endorse an instance's signing key with the cluster root key.",
            discussion: """
                Take the kid from the instance's own host (`stepsign status` there shows its \
                activeKid), not from the database: the endorsement makes every daemon trust that \
                key. Fetches the key's public half from the daemon, refuses one whose thumbprint \
                is not KID or whose instance is not NAME, signs the endorsement with the root key \
                and stores it (admin.endorseKey). --json prints {kid, trusted}.
                """)
        @OptionGroup var global: GlobalOptions
        @Option(name: .customLong("root-key"), help: ArgumentHelp("The cluster root private key (PEM, mode 0600).", valueName: "file"))
        var rootKey: String
        @Option(help: ArgumentHelp("The instance that holds the key.", valueName: "name"))
        var instance: String
        // A kid is base64url: one in 64 begins with '-', which must still be read as the value.
        @Option(parsing: .unconditional, help: ArgumentHelp("The key's kid (it may begin with '-').", valueName: "kid"))
        var kid: String
        @OptionGroup var output: JSONFlag

        func run() throws {
            try runReportingErrors {
                let root = try loadRootKey()
                let connection = try global.connect()
                let keys = try connection.call("admin.listKeys").requireAccepted("admin.listKeys").result?["keys"]?.arrayValue ?? []
                guard let row = keys.first(where: { $0["kid"]?.stringValue == kid }) else {
                    throw CLIError("the daemon lists no signing key \(kid)")
                }
                guard row["instance"]?.stringValue == instance else {
                    throw CLIError("key \(kid) is held by instance \"\(row["instance"]?.stringValue ?? "?")\", not \"\(instance)\"")
                }
                // The public half comes from the database: only its thumbprint, which is the kid
                // the operator took from the host, makes it the right key.
                let jwk = row["jwk"] ?? .null
                let publicKey: P256PublicKey
                do {
                    publicKey = try P256PublicKey(jwkJSON: Array(jwk.jsonText.utf8))
                } catch {
                    throw CLIError("the daemon's public key for \(kid) is not a P-256 JWK: \(error)")
                }
                guard publicKey.thumbprint == kid else {
                    throw CLIError("the public key the daemon lists under \(kid) has thumbprint \(publicKey.thumbprint): refusing to endorse it")
                }
                let endorsement = try KeyEndorsement(instance: instance, key: publicKey, iat: Int64(Date().timeIntervalSince1970))
                    .signed(by: root)
                let reply = try connection.call("admin.endorseKey", ["endorsement": endorsement]).requireAccepted("admin.endorseKey")
                let trusted = reply.result?["trusted"]?.boolValue ?? false
                if output.json {
                    JSONOutput.print(["kid": .string(kid), "trusted": .bool(trusted)])
                } else {
                    print("endorsed key \(kid) of instance \(instance) with root \(root.publicKey.thumbprint)")
                }
            }
        }

        /// The root private key, refused when others may read or write its file.
        private func loadRootKey() throws -> P256PrivateKey {
            let bytes = try SecretFile.read(path: rootKey, what: "cluster root key")
            do {
                return try P256PrivateKey(pkcs8PEM: String(decoding: bytes, as: UTF8.self))
            } catch {
                throw CLIError("\(rootKey) is not a P-256 private key: \(error)", exitCode: CLIError.usage)
            }
        }
    }
}
