#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StepSignProtocol
import StepSignConfig
import StepSignCrypto
import StepSignEngine
import StepSignFormat
import StepSignPostgres
import StepSignStorage

/// `stepsignd --config FILE --migrate-to postgresql [--json]`, which `stepsign admin migrate
/// --to postgresql` runs: this daemon's SQLite store (`state_dir/stepsign.sqlite`) copied into
/// the database of its `[storage.postgresql]`, whatever `backend` says, then the process exits
/// (what is copied: ``SQLiteToPostgresMigration``).
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
        // A daemon that serves from the state directory holds its lock (issue 39): the copy
        // would miss what it writes meanwhile.
        let stateLock: StateDirectoryLock?
        if access(settings.server.stateDir, F_OK) == 0 {
            do {
                stateLock = try StateDirectoryLock(stateDirectory: settings.server.stateDir)
            } catch {
                return fail("\(error)", status: 1)
            }
        } else {
            stateLock = nil
        }
        defer { withExtendedLifetime(stateLock) {} }
        let sourcePath = (settings.server.stateDir.hasSuffix("/") ? settings.server.stateDir : settings.server.stateDir + "/")
            + SQLiteStore.fileName
        let pg = settings.storage.postgresql
        let target = pg.usesUnixSocket ? pgConfiguration.unixSocketPath : "\(pg.host):\(pg.port)"
        let targetDescription = "database \(pg.database) on \(target) as \(pg.user)"

        // The seals (SPEC §5.4): the source's records are checked under this daemon's
        // keys/seal.key and sealed again in the target under the cluster's key.
        let sourceSeal: (seal: CredentialSeal, created: Bool)
        let targetSeal: CredentialSeal
        do {
            sourceSeal = try SealKey.stateKey(stateDirectory: settings.server.stateDir)
            targetSeal = try SealKey.clusterKey(file: settings.storage.sealKeyFile, environment: ProcessInfo.processInfo.environment)
        } catch {
            return fail("\(error)", status: Self.badInput)
        }
        let source: SQLiteMigrationSource
        do {
            source = try SQLiteMigrationSource.open(path: sourcePath, seal: sourceSeal.seal, sealUnsealed: sourceSeal.created)
        } catch StorageError.stateFile(let path, let code) where code == ENOENT {
            return fail("there is no SQLite database at \(path): nothing to migrate", status: 1)
        } catch {
            return fail("cannot open the SQLite database \(sourcePath) and hold it still: \(error)", status: 1)
        }
        let store: PostgresStore
        do {
            store = try await PostgresStore.open(pgConfiguration, seal: targetSeal)
        } catch {
            try? await source.close()
            return fail("cannot open the PostgreSQL \(targetDescription): \(error)", status: Self.status(for: error))
        }
        let outcome: Result<MigrationSummary, any Error>
        do {
            let migration = SQLiteToPostgresMigration(source: source, target: store,
                                                      checkpointEntries: settings.ledger.checkpointEntries)
            outcome = .success(try await migration.run())
        } catch {
            outcome = .failure(error)
        }
        try? await store.close()
        try? await source.close()
        switch outcome {
        case let .failure(error):
            return fail("\(error) (target: \(targetDescription))", status: Self.status(for: error))
        case let .success(summary):
            report(summary, source: sourcePath, target: target)
            guard summary.audit == summary.sourceAudit else {
                return fail("the copy was committed, but the ledger audit on PostgreSQL (\(Self.describe(summary.audit))) "
                            + "differs from the source's (\(Self.describe(summary.sourceAudit)))", status: 1)
            }
            return 0
        }
    }

    private var pgConfiguration: PostgresStoreConfiguration {
        PostgresStoreConfiguration(settings.storage.postgresql, poolSize: 2)
    }

    /// 2 for what only a change of settings fixes (as the daemon's 78), else 1.
    private static func status(for error: any Error) -> Int32 {
        guard let error = error as? PostgresStoreError else { return 1 }
        switch error {
        case .schemaTooNew, .configuration, .passwordFile, .sealNotPermitted:
            return badInput
        case .server where error.refusesLoginOrDatabase:
            return badInput
        default:
            return 1
        }
    }

    private func report(_ summary: MigrationSummary, source: String, target: String) {
        let pg = settings.storage.postgresql
        let head = Hex.encode(summary.head.entryHash)
        if json {
            let object: JSONValue = [
                "ok": .bool(summary.audit == summary.sourceAudit),
                "source": .string(source),
                "target": ["server": .string(target), "database": .string(pg.database), "user": .string(pg.user)],
                "users": summary.users.jsonValue,
                "passwordHistory": summary.passwordHistoryEntries.jsonValue,
                "deviceKeys": summary.deviceKeys.jsonValue,
                "signingKeys": summary.signingKeys.jsonValue,
                "ledgerEntries": summary.ledgerEntries.jsonValue,
                "checkpoints": summary.checkpoints.jsonValue,
                "groupMembers": summary.groupMembers.jsonValue,
                "approvals": summary.approvals.jsonValue,
                "pendingApprovals": summary.pendingApprovals.jsonValue,
                "approvalVotes": summary.approvalVotes.jsonValue,
                "idempotencyKeys": summary.idempotencyKeys.jsonValue,
                "failingSeal": [
                    "groupMembers": .array(summary.unsealedGroupMembers.map { ["group": .string($0.group), "user": .string($0.user)] }),
                    "approvals": .array(summary.unsealedApprovals.map(JSONValue.string)),
                ],
                "head": ["seq": summary.head.seq.jsonValue, "entryHash": .string(head)],
                "signaturesChecked": .bool(summary.signaturesChecked),
                "sourceAudit": Self.json(summary.sourceAudit),
                "audit": Self.json(summary.audit),
            ]
            print(object.sortingKeys.jsonText)
            return
        }
        let checked = summary.signaturesChecked ? "signatures, chain and checkpoints" : "the chain only (a key record has no public half)"
        // Records that failed their seal in the source are copied failing (never sealed again).
        let unsealed = summary.unsealedGroupMembers.map { "group \($0.group): \($0.user)" }
            + summary.unsealedApprovals.map { "request \($0)" }
        let failing = unsealed.isEmpty ? ""
            : "\nfailing their seal in the source, copied unsealed (they do not hold and are never acted on, as before): "
                + unsealed.joined(separator: ", ")
        let audit = summary.audit.ok
            ? "passes (\(Self.count(summary.audit.entries, "entry", "entries")), \(checked))"
            : "reports what the source's reports: \(Self.describe(summary.audit))"
        print("""
            migrated \(source)
                into database \(pg.database) on \(target) as \(pg.user)
            copied: \(Self.count(summary.users, "user", "users")) (\(Self.count(summary.passwordHistoryEntries, "earlier password hash", "earlier password hashes"))), \
            \(Self.count(summary.deviceKeys, "device key", "device keys")), \(Self.count(summary.signingKeys, "signing key", "signing keys")), \
            \(Self.count(Int(summary.ledgerEntries), "ledger entry", "ledger entries")), \(Self.count(summary.checkpoints, "checkpoint", "checkpoints")), \
            \(Self.count(summary.groupMembers, "group membership", "group memberships")), \
            \(Self.count(summary.approvals, "request for approval", "requests for approval")) (\(summary.pendingApprovals) pending) \
            with \(Self.count(summary.approvalVotes, "approval", "approvals")), \(Self.count(summary.idempotencyKeys, "idempotency key", "idempotency keys"))\(failing)
            ledger head: seq \(summary.head.seq), entry hash \(head) (the same in both)
            verified: every row read back equal before the commit; the audit on PostgreSQL \(audit)
            next: set [storage] backend = "postgresql" and start stepsignd with the same state directory (its keys/) and instance
            """)
    }

    private static func count(_ number: Int, _ one: String, _ many: String) -> String {
        "\(number) \(number == 1 ? one : many)"
    }

    private static func describe(_ audit: LedgerAudit) -> String {
        audit.ok ? "ok, \(count(audit.entries, "entry", "entries"))"
            : "not ok at seq \(audit.firstBadSeq.map(String.init) ?? "-"): \(audit.problem ?? "")"
    }

    private static func json(_ audit: LedgerAudit) -> JSONValue {
        [
            "ok": .bool(audit.ok), "entries": audit.entries.jsonValue, "checkpoints": audit.checkpoints.jsonValue,
            "firstBadSeq": audit.firstBadSeq.jsonValue, "problem": audit.problem.jsonValue,
        ]
    }

    private func fail(_ message: String, status: Int32) -> Int32 {
        FileHandleOutput.standardError("stepsign admin migrate: \(message)\n")
        if json {
            print(JSONValue.object([("error", .string(message)), ("ok", false)]).jsonText)
        }
        return status
    }
}
