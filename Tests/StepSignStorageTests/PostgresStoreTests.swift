import Foundation
import StepSignCrypto
import StepSignFormat
@testable import StepSignPostgres
import StepSignTestSupport
import Testing
@testable import StepSignStorage

/// What only the PostgreSQL store has: a schema several daemons migrate at once, a ledger the
/// database itself keeps append-only and chained, a least-privilege role, one chain for
/// several pools, its connection settings (issue #14). The store-protocol tests run on it too
/// (`StoreBackend.allCases`).
@Suite(.enabled(if: PostgresTestServer.enabled)) struct PostgresStoreTests {
    @Test func storesOpenedTogetherOnAnEmptyDatabaseMakeOneSchema() async throws {
        try await withPostgresDatabase { database in
            let stores = try await withThrowingTaskGroup(of: PostgresStore.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await database.open(poolSize: 1) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(stores.count == 8)
            // One migration row per version, one name key: every store counts a name alike.
            let versions = try await PostgresTestServer.administer(
                "SELECT m.version::text FROM stepsign_schema_migrations m ORDER BY m.version", database: database.name
            )
            #expect(versions == PostgresSchema.migrations.map { String($0.version) })
            try await stores[0].wrongAnswer("ghost")
            #expect(try await stores[7].attemptCounter(name: "ghost", now: epoch).failedAttempts == 1)
            for store in stores { try await store.close() }
        }
    }

    /// Issue 40: the log core hashes (rows, tree nodes, notes), the database only checks links
    /// and inserts. No function or procedure of the schema at its newest version hashes,
    /// whether a trigger, the append or a leftover of an older version.
    @Test func noFunctionOfTheNewestSchemaHashes() async throws {
        try await withPostgresDatabase { database in
            let store = try await database.open()
            try await store.close()
            let routines = try await PostgresTestServer.administer("""
                SELECT p.proname::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                 WHERE n.nspname = current_schema() ORDER BY p.proname
                """, database: database.name)
            #expect(routines.contains("stepsign_ledger_insert") && routines.contains("stepsign_ledger_rules"), "\(routines)")
            let hashing = try await PostgresTestServer.administer("""
                SELECT p.proname::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                 WHERE n.nspname = current_schema()
                   AND (p.prosrc ILIKE '%sha256(%' OR p.prosrc ILIKE '%digest(%' OR p.prosrc ILIKE '%sha224(%'
                        OR p.prosrc ILIKE '%sha384(%' OR p.prosrc ILIKE '%sha512(%' OR p.prosrc ILIKE '%md5(%')
                 ORDER BY p.proname
                """, database: database.name)
            #expect(hashing.isEmpty, "functions that hash: \(hashing)")
        }
    }

    @Test func aDatabaseMigratedByANewerDaemonIsRefusedWithATypedError() async throws {
        try await withPostgresDatabase { database in
            let store = try await database.open()
            try await store.close()
            try await PostgresTestServer.administer(
                "INSERT INTO stepsign_schema_migrations (version, name) VALUES (99, 'v99-future')", database: database.name
            )
            let error = await #expect(throws: PostgresStoreError.self) { try await database.open() }
            #expect(error == .schemaTooNew(found: 99, supported: PostgresSchema.latestVersion))
            #expect(error.map { "\($0)" }?.contains("upgrade stepsignd") == true)
        }
    }

    @Test func theDatabaseRefusesToChangeOrRemoveLedgerRowsAndCheckpoints() async throws {
        try await withPostgresDatabase { database in
            let store = try await database.open()
            _ = try await store.appendLedger(ledgerBatch(1..<4))
            try await store.appendCheckpoint(LedgerCheckpointRecord(seq: 3, entryHash: Array(repeating: 1, count: 32),
                                                                    kid: "kid-1", jws: "a.b.c", createdAt: epoch))
            try await store.close()
            // As the superuser, who bypasses every privilege but not the triggers.
            for sql in ["UPDATE ledger SET user_name = 'mallory' WHERE seq = 2", "DELETE FROM ledger WHERE seq = 3",
                        "TRUNCATE ledger", "UPDATE ledger_checkpoints SET seq = 1", "DELETE FROM ledger_checkpoints",
                        "TRUNCATE ledger_checkpoints"] {
                #expect(try await PostgresTestServer.sqlState(of: sql, database: database.name) == "23001", "\(sql)")
            }
            #expect(try await PostgresTestServer.administer("SELECT count(*)::text FROM ledger", database: database.name) == ["3"])
        }
    }

    @Test func theDatabaseRefusesAForkAndAGapAndTheAuditAWrongHash() async throws {
        try await withPostgresDatabase { database in
            let store = try await database.open()
            let entries = try await store.appendLedger(ledgerBatch(1..<3))
            try await store.close()
            func insert(seq: Int64, id: String, prev: [UInt8], jws: String, hash: [UInt8]? = nil) -> String {
                let entryHash = hash ?? LedgerChain.entryHash(previous: prev, jws: jws)
                return """
                    INSERT INTO ledger (seq, signature_id, user_name, iat, kid, jws, prev_hash, entry_hash, peer_uid, peer_pid,
                        peer_comm, auth_level, created_at)
                    VALUES (\(seq), '\(id)', 'mallory', 1, 'kid-1', '\(jws)', '\\x\(Hex.encode(prev))',
                        '\\x\(Hex.encode(entryHash))', 0, 1, 'sh', 1, now())
                    """
            }
            let last = try #require(entries.last)
            // A second entry 2 (a fork at the same number) is a primary-key violation.
            #expect(try await PostgresTestServer.sqlState(
                of: insert(seq: 2, id: "fork", prev: entries[0].entryHash, jws: "x.y.z"), database: database.name) == "23505")
            // Entry 4 with no entry 3 (a gap).
            #expect(try await PostgresTestServer.sqlState(
                of: insert(seq: 4, id: "gap", prev: last.entryHash, jws: "x.y.z"), database: database.name) == "23000")
            // Entry 3 chained to entry 1 instead of 2.
            #expect(try await PostgresTestServer.sqlState(
                of: insert(seq: 3, id: "rechain", prev: entries[0].entryHash, jws: "x.y.z"), database: database.name) == "23000")
            // The rules hold within one statement too: entries 3 and 4 in one INSERT, 4 chained to 2.
            func rows(_ statements: String...) -> String {
                statements[0] + statements.dropFirst().map { ", " + $0.components(separatedBy: "VALUES ")[1] }.joined()
            }
            let three = LedgerChain.entryHash(previous: last.entryHash, jws: "x.y.z")
            #expect(try await PostgresTestServer.sqlState(
                of: rows(insert(seq: 3, id: "three", prev: last.entryHash, jws: "x.y.z"),
                         insert(seq: 4, id: "four", prev: last.entryHash, jws: "x.y.z")), database: database.name) == "23000")
            // The right next entries go in, in one statement.
            #expect(try await PostgresTestServer.sqlState(
                of: rows(insert(seq: 3, id: "three", prev: last.entryHash, jws: "x.y.z"),
                         insert(seq: 4, id: "four", prev: three, jws: "x.y.z")), database: database.name) == nil)
            // An entry whose hash is not SHA-256(prev || SHA-256(jws)) follows and links: the
            // database no longer hashes rows (schema v17, the log core computes every hash); the
            // daemons' log core and the audit, which hash every entry from its JWS, refuse it.
            let four = LedgerChain.entryHash(previous: three, jws: "x.y.z")
            #expect(try await PostgresTestServer.sqlState(
                of: insert(seq: 5, id: "badhash", prev: four, jws: "x.y.z", hash: Array(repeating: 7, count: 32)),
                database: database.name) == nil)
            let reopened = try await database.open()
            #expect(try await reopened.auditLedger().firstBadSeq == 5)
            try await reopened.close()
        }
    }

    /// docs/sql/roles.sql, applied with psql as the docs say: the daemon role does what a daemon
    /// does, and the database refuses it any change to the ledger.
    @Test func theLeastPrivilegeRoleWorksAndCannotRewriteTheLedger() async throws {
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let owner = "stepsign_owner_\(suffix)"
        let daemon = "stepsign_daemon_\(suffix)"
        try await PostgresTestServer.administer("CREATE ROLE \(owner) LOGIN")
        try await PostgresTestServer.administer("CREATE ROLE \(daemon) LOGIN")
        let name = "stepsign_t_roles_\(suffix)"
        try await PostgresTestServer.administer("CREATE DATABASE \(name) OWNER \(owner)")
        let database = TemporaryPostgresDatabase(name: name)
        do {
            // The owner makes the schema.
            let asOwner = try await PostgresStore.open(try database.configuration(user: owner), seal: TestSeal.seal)
            _ = try await asOwner.appendLedger(ledgerBatch(1..<3))
            try await asOwner.close()
            // Before roles.sql the daemon role cannot even read.
            #expect(try await PostgresTestServer.sqlState(of: "SELECT count(*) FROM ledger", database: name, user: daemon) == "42501")

            try runPsql(file: repositoryRoot + "/docs/sql/roles.sql", database: name, variables: ["daemon": daemon])

            let store = try await PostgresStore.open(try database.configuration(user: daemon), seal: TestSeal.seal)
            try await store.addUser(newUser("alice"))
            try await store.wrongAnswer("alice")
            try await store.wrongAnswer("ghost")
            try await store.rightAnswer("alice")
            try await store.reserveAttempt(name: "ghost", maxAttempts: 3, blockSeconds: 0, now: epoch)
            try await store.setPassword(user: "alice", hash: "h2", at: epoch, historyLimit: 5)
            #expect(try await store.useOnce("nonce", expiresAt: epoch.addingTimeInterval(60), now: epoch))
            _ = try await store.issueActivationCode(
                ActivationCodeRecord(user: "alice", codeHash: "c", verificationKey: "v", expiresAt: epoch.addingTimeInterval(600)),
                maxCodesPerHour: 3, now: epoch)
            _ = try await store.reserveActivationAttempt(name: "alice", maxAttempts: 3, now: epoch)
            #expect(try await store.consumeActivationCode(user: "alice", codeHash: "c", now: epoch))
            try await store.addDeviceKey(DeviceKeyRecord(kid: "d1", user: "alice", publicKeyJWK: "{}", label: "l", createdAt: epoch))
            try await store.addSigningKey(kid: "k1", createdAt: epoch, instance: "a")
            let entries = try await store.appendLedger(ledgerBatch(3..<6))
            #expect(entries.map(\.seq) == [3, 4, 5])
            try await store.appendCheckpoint(LedgerCheckpointRecord(seq: 5, entryHash: entries[2].entryHash, kid: "k1",
                                                                    jws: "a.b.c", createdAt: epoch))
            #expect(try await store.auditLedger().entries == 5)
            #expect(try await store.claimLogOrigin("a.example/log") == "a.example/log")
            try await store.appendLogCheckpoint(LogCheckpointRecord(size: 5, instance: "a", note: "n", createdAt: epoch))
            try await store.addLogCosignatures([LogCosignatureRecord(size: 5, witness: "w", line: "l", createdAt: epoch)])
            #expect(try await store.removeUser(named: "alice"))
            try await store.close()

            for sql in ["UPDATE ledger SET user_name = 'mallory' WHERE seq = 1", "DELETE FROM ledger WHERE seq = 5",
                        "TRUNCATE ledger", "UPDATE ledger_checkpoints SET seq = 1", "DELETE FROM ledger_checkpoints",
                        "DROP TRIGGER ledger_append_only ON ledger", "ALTER TABLE ledger DISABLE TRIGGER ALL",
                        "UPDATE store_secrets SET value = '\\x00'", "CREATE TABLE extra (x int)",
                        // The log's origin and checkpoints (SPEC §5.5) are written once.
                        "UPDATE log_origin SET origin = 'b.example/log'", "DELETE FROM log_origin",
                        "UPDATE log_checkpoints SET note = 'x'", "DELETE FROM log_checkpoints",
                        "UPDATE log_cosignatures SET line = 'x'", "DELETE FROM log_cosignatures",
                        "UPDATE log_epochs SET first_index = 0", "DELETE FROM log_epochs", "TRUNCATE log_epochs",
                        // The seal key's check value (SPEC §5.4): deleting it would make the next
                        // start seal whatever rows are unsealed.
                        "DELETE FROM store_secrets WHERE name = 'seal_check'"] {
                #expect(try await PostgresTestServer.sqlState(of: sql, database: name, user: daemon) == "42501", "\(sql)")
            }
            // The role may write users, but a user it writes is never used.
            _ = try await PostgresTestServer.administer("""
                INSERT INTO users (name, password_hash, password_changed_at, created_at, credential_token)
                VALUES ('mallory', 'scrypt$known', now(), now(), '\\x00')
                """, database: name, user: daemon)
            let reopened = try await PostgresStore.open(try database.configuration(user: daemon), seal: TestSeal.seal)
            #expect(try await reopened.user(named: "mallory")?.sealFailure == .missing)
            #expect(try await reopened.reserveAttempt(name: "mallory", maxAttempts: 3, blockSeconds: 0, now: epoch) == .unsealed(.missing))
            try await reopened.close()
            #expect(try await PostgresTestServer.administer("SELECT count(*)::text FROM ledger", database: name) == ["5"])
        } catch {
            await dropRoles(database: database, owner: owner, daemon: daemon)
            throw error
        }
        await dropRoles(database: database, owner: owner, daemon: daemon)
    }

    private func dropRoles(database: TemporaryPostgresDatabase, owner: String, daemon: String) async {
        await database.drop()
        for role in [daemon, owner] {
            _ = try? await PostgresTestServer.administer("DROP OWNED BY \(role)")
            _ = try? await PostgresTestServer.administer("DROP ROLE IF EXISTS \(role)")
        }
    }

    /// Four stores with pools of their own (four daemons) append batches at once: one chain,
    /// seq 1…N with no gap and no number twice, each store's entries where it was told.
    @Test func fourStoresAppendingAtOnceMakeOneChain() async throws {
        try await withStores(.postgresql, count: 4) { stores in
            let perStore = 12
            let batchSize = 25
            let returned = try await withThrowingTaskGroup(of: [LedgerEntry].self) { group in
                for (index, store) in stores.enumerated() {
                    group.addTask {
                        var entries: [LedgerEntry] = []
                        for batch in 0..<perStore {
                            let start = (index * perStore + batch) * batchSize
                            entries += try await store.appendLedger(ledgerBatch(start..<start + batchSize))
                        }
                        return entries
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            let total = stores.count * perStore * batchSize
            #expect(returned.map(\.seq).sorted() == Array(1...Int64(total)))
            let stored = try await stores[1].ledgerEntries(afterSeq: 0, limit: total + 1)
            #expect(stored.count == total)
            #expect(Dictionary(uniqueKeysWithValues: stored.map { ($0.seq, $0) }) ==
                    Dictionary(uniqueKeysWithValues: returned.map { ($0.seq, $0) }))
            #expect(LedgerChain.audit(stored.map(\.link)).ok)
            for store in stores {
                #expect(try await store.auditLedger() == LedgerAudit(ok: true, entries: total, firstBadSeq: nil))
            }
        }
    }

    /// A batch is one `CALL` that appends and commits; one an entry-count checkpoint falls in
    /// is committed in a transaction with its checkpoint instead. Batches of three with a
    /// checkpoint every five take both ways in turn: a checkpoint at every fifth entry, none
    /// missing, none twice, one chain.
    @Test func batchesWithAndWithoutACheckpointInThemKeepEveryCheckpoint() async throws {
        try await withStore(.postgresql) { store in
            let signer = TestCheckpointSigner(every: 5)
            for start in stride(from: 1, to: 22, by: 3) {
                let entries = try await store.appendLedger(ledgerBatch(start..<(start + 3)), checkpoints: signer)
                #expect(entries.map(\.seq) == (start..<(start + 3)).map(Int64.init))
            }
            let checkpoints = try await store.logCheckpoints(afterSize: 0, throughSize: nil)
            #expect(checkpoints.map(\.size) == [5, 10, 15, 20])
            #expect(signer.signedSizes == [5, 10, 15, 20])
            for checkpoint in checkpoints {
                #expect(checkpoint.note == "note \(checkpoint.size) \(Hex.encode(try await store.ledgerRoot(size: checkpoint.size)))\n")
            }
            #expect(try await store.auditLedger() == LedgerAudit(ok: true, entries: 21, firstBadSeq: nil))
        }
    }

    @Test func aClosedStoreFailsItsCalls() async throws {
        try await withPostgresDatabase { database in
            let store = try await database.open()
            try await store.close()
            await #expect(throws: (any Error).self) { try await store.user(named: "alice") }
        }
    }

    /// One connection attempt, reported with its cause, not the pool's minute of retries
    /// (whose error would name its circuit breaker). No time bound: on a loaded machine the
    /// whole suite is starved alike.
    @Test func aServerThatIsNotThereIsReportedUnavailableAfterOneAttempt() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        var configuration = try PostgresTestServer.configuration(database: "stepsign")
        configuration.host = directory.parent
        configuration.connectTimeout = .seconds(2)
        let error = await #expect(throws: PostgresStoreError.self) { try await PostgresStore.open(configuration, seal: TestSeal.seal) }
        guard case let .unavailable(reason) = error else {
            Issue.record("not unavailable: \(String(describing: error))")
            return
        }
        #expect(!reason.contains("CircuitBreaker"), "\(reason)")
        #expect(reason.contains("connectionError"), "\(reason)")
    }

    @Test func unusableSettingsAreRefusedBeforeConnecting() async throws {
        var configuration = try PostgresTestServer.configuration(database: "nowhere")
        configuration.tls = .require
        await #expect(throws: PostgresStoreError.configuration(
            "tls = \"require\" applies to TCP only; host is a Unix socket directory")) {
            try await PostgresStore.open(configuration, seal: TestSeal.seal)
        }
        configuration.tls = .disable
        configuration.poolSize = 0
        await #expect(throws: PostgresStoreError.configuration("pool_size 0 is not 1-1000")) {
            try await PostgresStore.open(configuration, seal: TestSeal.seal)
        }
    }

    @Test func thePasswordFileIsReadAndNeverShown() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        let empty = directory.parent + "/empty"
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        var configuration = try PostgresTestServer.configuration(database: "nowhere")
        configuration.settings.passwordFile = empty
        await #expect(throws: PostgresStoreError.passwordFile(path: empty, reason: "is empty")) {
            try await PostgresStore.open(configuration, seal: TestSeal.seal)
        }
        configuration.settings.passwordFile = directory.parent + "/missing"
        await #expect(throws: PostgresStoreError.passwordFile(path: directory.parent + "/missing", reason: "cannot be read")) {
            try await PostgresStore.open(configuration, seal: TestSeal.seal)
        }
        // A password the server does not ask for (trust authentication here) is read and
        // the store opens; the password is in no error or description.
        let secret = directory.parent + "/secret"
        _ = FileManager.default.createFile(atPath: secret, contents: Data("S3cret-pg-pass\n".utf8))
        try await withPostgresDatabase { database in
            var configuration = try database.configuration()
            configuration.settings.passwordFile = secret
            let store = try await PostgresStore.open(configuration, seal: TestSeal.seal)
            #expect(!"\(configuration)".contains("S3cret"))
            try await store.close()
        }
    }
}

/// The repository's root directory (for docs/sql).
let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

/// Runs psql (PostgreSQL's own client, as an operator would) on `file` as the superuser.
func runPsql(file: String, database: String, variables: [String: String]) throws {
    let settings = try PostgresTestServer.requireSettings()
    var arguments = ["-X", "-q", "-h", settings.socketDirectory, "-U", settings.user, "-d", database, "-f", file]
    for (name, value) in variables.sorted(by: { $0.key < $1.key }) { arguments += ["-v", "\(name)=\(value)"] }
    let result = try Tools.run(["/usr/lib/postgresql/15/bin/psql"] + arguments, environment: ["LC_ALL": "C.UTF-8"], timeout: 300)
    guard result.status == 0 else { throw PsqlFailed(status: result.status, message: result.stderr) }
}

struct PsqlFailed: Error, CustomStringConvertible {
    let status: Int32
    let message: String
    var description: String { "psql exited \(status): \(message)" }
}
