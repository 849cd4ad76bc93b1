#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import StepSignProtocol
import StepSignSystem

/// `stepsign admin backup --to FILE` (issue 27): the daemon copies its SQLite store while it
/// serves (SQLite's online backup: one consistent snapshot), into its state directory's
/// `backups/`; this copies that file to FILE (0600, replaced atomically, `fsync`ed) and removes
/// the daemon's copy, and refuses any other file the reply may name (``DaemonBackupFile``).
/// Run it as root (or as a user who may read the state directory).
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the daemon's SQLite store to a file while it serves.",
        discussion: """
            The copy holds users, devices, keys' public halves and the whole ledger, not the \
            private keys: keep the files of keys/ it lists with it (a restore needs them), and \
            never restore keys/log-checkpoint, which is how a restored daemon sees the entries the \
            backup lacks. PostgreSQL: use pg_dump on the server (docs/backups.md). --json prints \
            {file, bytes, ledgerSize, ledgerHead, keys}.
            """
    )
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: JSONFlag
    @Option(name: .customLong("to"), help: ArgumentHelp("The file to write (replaced if it exists, mode 0600).", valueName: "file"))
    var file: String

    func run() throws {
        try runReportingErrors {
            let reply = try global.connect().call("admin.backup", timeout: 24 * 3600).requireAccepted("admin.backup")
            let result = reply.result ?? [:]
            guard let made = result["path"]?.stringValue else { throw CLIError("the daemon named no backup file") }
            let backup: DaemonBackupFile
            do {
                backup = try DaemonBackupFile(opening: made)
            } catch {
                throw CLIError("refusing the backup file the daemon named, \(made): \(error); nothing was copied or removed")
            }
            do {
                try Self.copy(backup.descriptor, source: made, to: file)
            } catch {
                throw CLIError("cannot copy the backup to \(file) (\(error)); it is at \(made), readable by the daemon's user and root")
            }
            backup.remove()
            let keys = (result["keys"]?.arrayValue ?? []).compactMap(\.stringValue)
            if output.json {
                JSONOutput.print([
                    "file": .string(file), "bytes": result["bytes"] ?? .null, "ledgerSize": result["ledgerSize"] ?? .null,
                    "ledgerHead": result["ledgerHead"] ?? .null, "keys": .array(keys.map { .string($0) }),
                ])
            } else {
                let entries = result["ledgerSize"]?.int ?? 0
                print("backup written to \(file): \(entries) ledger \(entries == 1 ? "entry" : "entries"), "
                      + "\(result["bytes"]?.int ?? 0) bytes")
                print("keep with it, from the state directory: \(keys.joined(separator: " "))")
                print("never restore keys/log-checkpoint from a copy: it shows what a restore lost")
            }
        }
    }

    /// Copies the open file `input` (at `source`, for messages) to `path` through `path.tmp`
    /// (0600, exclusive), `fsync`, `rename`, and an `fsync` of the directory: a crash leaves
    /// the old file or the whole new one.
    static func copy(_ input: Int32, source: String, to path: String) throws {
        let temporary = path + ".tmp"
        unlink(temporary)
        let output = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(0o600))
        guard output >= 0 else { throw SystemError("open", path: temporary) }
        do {
            defer { close(output) }
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = retryingOnEINTR { chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) } }
                guard count >= 0 else { throw SystemError("read", path: source) }
                if count == 0 { break }
                try SecureFile.writeAll(Array(chunk[0..<count]), to: output, path: temporary)
            }
            guard fsync(output) == 0 else { throw SystemError("fsync", path: temporary) }
        } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let error = SystemError("rename", path: path)
            unlink(temporary)
            throw error
        }
        try SecureFile.sync(path)
    }
}
