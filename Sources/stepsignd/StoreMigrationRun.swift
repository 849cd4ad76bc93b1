#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StepSignConfig
import StepSignCrypto
import StepSignEngine
import StepSignFormat
import StepSignPostgres
import StepSignStorage

/// `stepsignd --config FILE --migrate-to postgresql [--json]`, which `stepsign admin migrate
/// --to postgresql` runs: this daemon's SQLite store (`state_dir/stepsign.sqlite`) copied into
/// the database of its `[storage.postgresql]`, whatever `backend` says, then the process exits.
///
/// The configuration is read and checked as at the daemon's start (strict modes, the state
/// directory included, so it runs as the daemon's user), and the database password comes from
/// `password_file` or the systemd credential `stepsign-db-password` as the daemon's does: no
/// secret on the command line. Exit status as stepsign's: 0 migrated and verified; 1 refused or
/// failed (nothing written: no source database, a target that is not empty, a broken source
/// chain, a copy that does not read back, PostgreSQL unreachable); 2 a configuration that
/// cannot work (the file, strict modes, the PostgreSQL settings, a refused login).
struct StoreMigrationRun {
    let configPath: String
    let settings: StepSignConfiguration
    let json: Bool

    /// Exit status for a usage or configuration problem.
    static let badInput: Int32 = 2

    /// Runs the migration and returns the exit status; reports on stdout (the summary) and
    /// stderr (what went wrong).
    func run() async -> Int32 {
        var checked = settings
        checked.storage.backend = .postgresql  // so strict modes check password_file as the daemon on PostgreSQL would
        do {
            let strict = StrictModes()
            try strict.checkConfigurationFile(configPath)
            try strict.checkReferencedFiles(of: checked)
            try strict.checkStateDirectory(settings.server.stateDir)
        } catch {
            return fail("\(error) (run the migration as the daemon's user, e.g. runuser -u stepsign -- stepsign admin migrate …)",
                        status: Self.badInput)
        }
        let sourcePath = (settings.server.stateDir.hasSuffix("/") ? settings.server.stateDir : settings.server.stateDir + "/")
            + SQLiteStore.fileName
        let pg = settings.storage.postgresql
        let target = pg.usesUnixSocket ? pgConfiguration.unixSocketPath : "\(pg.host):\(pg.port)"
        let targetDescription = "database \(pg.database) on \(target) as \(pg.user)"

        let source: SQLiteMigrationSource
        do {
            source = try SQLiteMigrationSource.open(path: sourcePath)
        } catch StorageError.stateFile(let path, let code) where code == ENOENT {
            return fail("there is no SQLite database at \(path): nothing to migrate", status: 1)
        } catch {
            return fail("cannot open the SQLite database \(sourcePath) and hold it still: \(error)", status: 1)
        }
        let store: PostgresStore
        do {
            store = try await PostgresStore.open(pgConfiguration)
        } catch {
            try? await source.close()
            return fail("cannot open the PostgreSQL \(targetDescription): \(error)", status: Self.status(for: error))
        }
        let outcome: Result<MigrationSummary, any Error>
        do {
            // Signature checks need the public keys; the records hold none yet, so the copy's
            // chain, IDs and checkpoints' positions are what is verified (besides reading every
            // row back).
            let migration = SQLiteToPostgresMigration(source: source, target: store,
                                                      verification: LedgerVerifier.Options(trustedKeys: nil))
            outcome = .success(try await migration.run())
        } catch {
            outcome = .failure(error)
        }
        try? await store.close()
        try? await source.close()
        switch outcome {
        case let .failure(error):
            return fail("migration to the PostgreSQL \(targetDescription) failed: \(error)", status: Self.status(for: error))
        case let .success(summary):
            report(summary, source: sourcePath, target: target)
            guard summary.audit.ok else {
                return fail("the copy was committed, but the ledger audit on PostgreSQL fails at seq "
                            + "\(summary.audit.firstBadSeq.map(String.init) ?? "-"): \(summary.audit.problem ?? "")", status: 1)
            }
            return 0
        }
    }

    private var pgConfiguration: PostgresStoreConfiguration {
        let pg = settings.storage.postgresql
        return PostgresStoreConfiguration(
            host: pg.host, port: pg.port, database: pg.database, user: pg.user,
            passwordFile: pg.passwordFile.isEmpty ? nil : pg.passwordFile,
            tls: PostgresStoreConfiguration.TLSMode(rawValue: pg.tls.rawValue) ?? .disable,
            tlsCAFile: pg.tlsCAFile.isEmpty ? nil : pg.tlsCAFile,
            poolSize: 2)
    }

    /// 2 for what only a change of settings fixes (as the daemon's 78), else 1.
    private static func status(for error: any Error) -> Int32 {
        switch error as? PostgresStoreError {
        case .schemaTooNew, .configuration, .passwordFile:
            return badInput
        case let .server(sqlState, _) where sqlState.hasPrefix("28") || sqlState == "3D000":
            return badInput
        default:
            return 1
        }
    }

    private func report(_ summary: MigrationSummary, source: String, target: String) {
        let pg = settings.storage.postgresql
        let head = Hex.encode(summary.head.entryHash)
        if json {
            let object: [String: Any] = [
                "ok": summary.audit.ok,
                "source": source,
                "target": ["server": target, "database": pg.database, "user": pg.user],
                "users": summary.users,
                "passwordHistory": summary.passwordHistoryEntries,
                "deviceKeys": summary.deviceKeys,
                "signingKeys": summary.signingKeys,
                "ledgerEntries": summary.ledgerEntries,
                "checkpoints": summary.checkpoints,
                "head": ["seq": summary.head.seq, "entryHash": head],
                "audit": [
                    "ok": summary.audit.ok, "entries": summary.audit.entries, "checkpoints": summary.audit.checkpoints,
                    "firstBadSeq": summary.audit.firstBadSeq as Any? ?? NSNull(),
                    "problem": summary.audit.problem as Any? ?? NSNull(),
                ] as [String: Any],
            ]
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
            print(String(decoding: data, as: UTF8.self))
            return
        }
        print("""
            migrated \(source)
                into database \(pg.database) on \(target) as \(pg.user)
            copied: \(summary.users) users (\(summary.passwordHistoryEntries) earlier password hashes), \
            \(summary.deviceKeys) device keys, \(summary.signingKeys) signing keys, \
            \(summary.ledgerEntries) ledger entries, \(summary.checkpoints) checkpoints
            ledger head: seq \(summary.head.seq), entry hash \(head) (the same in both)
            verified: every row read back equal before the commit; \
            audit on PostgreSQL \(summary.audit.ok ? "passes" : "FAILS"): \(summary.audit.entries) entries
            next: set [storage] backend = "postgresql" and start stepsignd with the same state directory (its keys/)
            """)
    }

    private func fail(_ message: String, status: Int32) -> Int32 {
        FileHandleOutput.standardError("stepsignd: \(message)\n")
        if json {
            let data = (try? JSONSerialization.data(withJSONObject: ["ok": false, "error": message], options: [.sortedKeys]))
                ?? Data("{\"ok\":false}".utf8)
            print(String(decoding: data, as: UTF8.self))
        }
        return status
    }
}
