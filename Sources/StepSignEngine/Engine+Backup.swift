#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StepSignCrypto
import StepSignProtocol
import StepSignStorage
import StepSignSystem

extension Engine {
    /// The directory of the state directory that holds the backup `admin.backup` made last.
    static let backupDirectoryName = "backups"

    /// `admin.backup` (issue 27): a consistent copy of the SQLite store, made while serving, in
    /// `<state_dir>/backups/` (the only place the hardened unit lets the daemon write), the one
    /// made before removed first, so backups never fill the disk. The reply says where it is,
    /// what it holds, and which files of `keys/` must be kept with it; `stepsign admin backup
    /// --to FILE` copies it out and removes it. One at a time (14 while one is made).
    func backup(context: RequestContext) async throws -> Reply {
        guard let backupStore = onlineBackup else {
            throw StepSignError(.notSupported,
                                "the store is PostgreSQL: back it up on the server with pg_dump (docs/backups.md)")
        }
        guard backupInProgress.withLockedValue({ busy in defer { busy = true }; return !busy }) else {
            throw StepSignError(.busy, "a backup is being made; try again when it is done")
        }
        defer { backupInProgress.withLockedValue { $0 = false } }
        let directory = context.config.server.stateDir + "/" + Self.backupDirectoryName
        try SecureFile.makeDirectory(directory, mode: 0o700)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            unlink(directory + "/" + name)
        }
        let stamp = RFC3339Timestamp.string(context.now).replacingOccurrences(of: ":", with: "")
        let path = directory + "/stepsign-\(stamp).sqlite"
        let backup = try await backupStore.backup(to: path)
        let keys = try Self.filesToKeep(keyDirectory: signing.keyring.directoryPath, stateDirectory: context.config.server.stateDir)
        logger.notice("backup made", metadata: [
            "path": "\(path)", "bytes": "\(backup.bytes)", "ledgerSize": "\(backup.ledgerSize)",
        ])
        return Reply(result: [
            "path": .string(path),
            "bytes": .int(backup.bytes),
            "ledgerSize": .int(backup.ledgerSize),
            "ledgerHead": .string(Hex.encode(backup.ledgerHeadHash)),
            "keys": .array(keys.map { .string($0) }),
        ])
    }

    /// The files of `keys/` a restore needs besides the database (the signing and log keys,
    /// retired ones, revocation records, the seal key), as paths under the state directory.
    /// Not the kept checkpoint (`keys/log-checkpoint`) nor its companions (`.pending`, `.head`,
    /// the chain's head at its size): they must outlive a restore, since they are what shows
    /// that a restored log lost entries (SPEC §5.5).
    static func filesToKeep(keyDirectory: String, stateDirectory: String) throws -> [String] {
        let prefix = keyDirectory.hasPrefix(stateDirectory + "/")
            ? String(keyDirectory.dropFirst(stateDirectory.count + 1)) + "/" : keyDirectory + "/"
        return try FileManager.default.contentsOfDirectory(atPath: keyDirectory)
            .filter { !$0.hasPrefix(TransparencyLog.stateFileName) && !$0.hasSuffix(".tmp") }
            .sorted()
            .map { prefix + $0 }
    }
}
