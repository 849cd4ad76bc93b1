#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation

/// `stepsign admin migrate --to postgresql`: moves this host's SQLite installation into
/// PostgreSQL (issue 14).
///
/// The copy needs both stores' code (GRDB, PostgresNIO), which only stepsignd links: this
/// command executes `stepsignd --config FILE --migrate-to postgresql`, found next to this
/// program, in `../sbin/`, or in `/usr/sbin`, and that process does the work under the daemon's
/// own rules for reading its configuration and the database password (docs/decisions.md).
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Copy this host's SQLite store into PostgreSQL, verified, all or nothing.",
        discussion: """
            Stop stepsignd first and run this as the daemon's user. It reads the daemon's \
            configuration: the source is state_dir/stepsign.sqlite, the target the database of \
            [storage.postgresql] (password from password_file or the systemd credential \
            stepsign-db-password, never from the command line). The target must hold no users, \
            keys or ledger yet. Users, password history, device keys, signing key records, the \
            ledger (same seq, hashes, JWS) and its checkpoints are copied in one transaction, \
            read back and audited. Then set backend = "postgresql" and start the daemon with the \
            same state directory. Exit: 0 migrated; 1 refused or failed (nothing written); 2 bad \
            configuration or usage.
            """
    )

    @Option(help: ArgumentHelp("The target backend.", valueName: "postgresql"))
    var to: String

    @Option(help: ArgumentHelp("The daemon's configuration file.", valueName: "file"))
    var config = "/etc/stepsign/stepsignd.toml"

    @Option(name: .customLong("state-dir"), help: ArgumentHelp("The state directory (overrides server.state_dir).", valueName: "dir"))
    var stateDir: String?

    @OptionGroup var output: JSONFlag

    func validate() throws {
        guard to == "postgresql" else { throw ValidationError("--to takes \"postgresql\" only") }
    }

    func run() throws {
        try runReportingErrors {
            guard let daemon = Self.daemonPath() else {
                throw CLIError("cannot find stepsignd (next to stepsign, in ../sbin or /usr/sbin); it does the migration")
            }
            var arguments = [daemon, "--config", config]
            if let stateDir { arguments += ["--state-dir", stateDir] }
            arguments += ["--migrate-to", to]
            if output.json { arguments.append("--json") }
            let argv = arguments.map { strdup($0) } + [nil]
            execv(daemon, argv)
            let reason = String(cString: strerror(errno))
            throw CLIError("cannot run \(daemon): \(reason)")
        }
    }

    /// stepsignd beside this program (a build directory, /usr/local/bin), in the sibling
    /// `sbin` (/usr/bin → /usr/sbin), or /usr/sbin/stepsignd.
    static func daemonPath() -> String? {
        var candidates: [String] = []
        if let own = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let directory = (own as NSString).deletingLastPathComponent
            candidates.append(directory + "/stepsignd")
            candidates.append((directory as NSString).deletingLastPathComponent + "/sbin/stepsignd")
        }
        candidates.append("/usr/sbin/stepsignd")
        return candidates.first { access($0, X_OK) == 0 }
    }
}
