#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GRDB
import StepSignSystem

/// The embedded ``StepSignStore``: one SQLite file in WAL mode, `<stateDir>/stepsign.sqlite`.
///
/// Writes go through the single writer connection of a GRDB `DatabasePool` (one transaction
/// per method, `BEGIN IMMEDIATE`), reads through its reader connections (snapshot isolation,
/// they do not wait for writers). Every commit is durable: `synchronous = FULL`.
/// The directory is created 0700, the database file and its `-wal`/`-shm` files are 0600.
public final class SQLiteStore: StepSignStore {
    /// The name of the database file inside the state directory.
    public static let fileName = "stepsign.sqlite"

    /// How long a write waits for another process holding the database lock.
    public static let busyTimeout: TimeInterval = 5

    /// The database file's path.
    public let path: String

    /// One daemon per file: every credential change goes through it.
    public var isShared: Bool { false }

    let pool: DatabasePool
    /// The thread the ledger's appends block on until their commit is durable.
    let ledgerThread = ThreadExecutor(name: "stepsign-ledger")
    /// The key of the HMAC under which names that are not users are counted.
    let nameKey: [UInt8]
    /// The seal of the credential records (SPEC §5.4).
    let credentialSeal: CredentialSeal

    private init(path: String, pool: DatabasePool, nameKey: [UInt8], seal: CredentialSeal) {
        self.path = path
        self.pool = pool
        self.nameKey = nameKey
        self.credentialSeal = seal
    }

    /// Opens (creating if needed) the store in `stateDirectory` and brings its schema up to date.
    ///
    /// Creates the directory with mode 0700 if it is missing (its parent must exist).
    /// `seal` seals and checks the credential records; `sealUnsealed`: see
    /// ``open(path:seal:sealUnsealed:)``.
    public static func open(stateDirectory: String, seal: CredentialSeal, sealUnsealed: Bool) throws -> SQLiteStore {
        try ensureDirectory(stateDirectory)
        let path = stateDirectory.hasSuffix("/") ? stateDirectory + fileName : stateDirectory + "/" + fileName
        return try open(path: path, seal: seal, sealUnsealed: sealUnsealed)
    }

    /// Opens (creating if needed) the store in the database file at `path`.
    ///
    /// The first time a seal key meets the database, the key's check value is stored and, if
    /// `sealUnsealed` (the caller made the key just now: an upgrade from a version without
    /// seals), every record without a seal is sealed. Afterwards a record without a seal is
    /// never sealed, and another key is refused (``StorageError/sealKeyMismatch``).
    public static func open(path: String, seal: CredentialSeal, sealUnsealed: Bool) throws -> SQLiteStore {
        do {
            return try openFiles(path: path, seal: seal, sealUnsealed: sealUnsealed)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_READONLY || error.resultCode == .SQLITE_CANTOPEN {
            // SQLite keeps no errno: the failed open of a file, or a read-only fallback after one.
            throw readWriteFault(path) ?? error
        }
    }

    private static func openFiles(path: String, seal: CredentialSeal, sealUnsealed: Bool) throws -> SQLiteStore {
        try ensurePrivateFile(path)

        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = "stepsign"
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        let nameKey: [UInt8]
        do {
            // Every commit reaches the disk before the call returns (SPEC §5: a signature is
            // returned only after its ledger row is durably committed). DatabasePool switches
            // the writer to synchronous = NORMAL when it enables WAL, after prepareDatabase
            // ran, so set FULL again on the (single, long-lived) writer connection and check.
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                let level = try Int.fetchOne(db, sql: "PRAGMA synchronous")
                guard level == 2 else {
                    throw DatabaseError(message: "could not set synchronous = FULL (got \(level.map(String.init) ?? "nil"))")
                }
            }
            // A newer stepsignd's schema is not migrated over, nor read (SPEC §5, as PostgreSQL).
            let unknown = try pool.read(SQLiteSchemaState.unknownMigrations)
            guard unknown.isEmpty else { throw SQLiteSchemaTooNew(path: path, unknown: unknown) }
            try SQLiteSchema.migrator.migrate(pool)
            // SQLite creates -wal and -shm with the database file's mode; make sure anyway.
            for suffix in ["", "-wal", "-shm"] {
                try restrictMode(path + suffix)
            }
            let stored = try pool.read { db in
                try Data.fetchOne(db, sql: "SELECT value FROM store_secrets WHERE name = 'name_key'")
            }
            guard let stored, stored.count == 32 else {
                throw StorageError.malformedRow(table: "store_secrets", detail: "name_key is missing or not 32 bytes")
            }
            nameKey = Array(stored)
        } catch {
            try? pool.close()
            throw error
        }
        let store = SQLiteStore(path: path, pool: pool, nameKey: nameKey, seal: seal)
        do {
            try store.prepareSeal(sealUnsealed: sealUnsealed)
            try store.prepareApprovalSeals()
        } catch {
            try? pool.close()
            throw error
        }
        return store
    }

    public func close() async throws {
        try pool.close()
    }

    // MARK: - Files

    /// Creates the state directory 0700 if it does not exist, as ``open(stateDirectory:)``
    /// does: for a daemon whose store is elsewhere (PostgreSQL) but whose keys live there.
    public static func ensureStateDirectory(_ path: String) throws {
        try ensureDirectory(path)
    }

    private static func ensureDirectory(_ path: String) throws {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw StorageError.stateDirectory(path: path, errno: ENOTDIR)
            }
            return
        }
        guard errno == ENOENT else { throw StorageError.stateDirectory(path: path, errno: errno) }
        if mkdir(path, 0o700) != 0 {
            guard errno == EEXIST else { throw StorageError.stateDirectory(path: path, errno: errno) }
            return
        }
        // mkdir is subject to the umask, which may only remove bits; set exactly 0700.
        if chmod(path, 0o700) != 0 {
            throw StorageError.stateDirectory(path: path, errno: errno)
        }
    }

    /// Creates the database file 0600 before SQLite does (SQLite would use 0644 minus the
    /// umask), or tightens an existing one. Refuses a symbolic link.
    private static func ensurePrivateFile(_ path: String) throws {
        let error = createPrivateFile(path)
        if error != 0 {
            throw StorageError.stateFile(path: path, errno: error)
        }
    }

    private static func restrictMode(_ path: String) throws {
        if chmod(path, 0o600) != 0, errno != ENOENT {
            throw StorageError.stateFile(path: path, errno: errno)
        }
    }
}

/// Opens or creates `path` with mode 0600 without following a symbolic link, forces the
/// mode to 0600 and closes it. Returns 0 or an errno. (Outside the class so that `open` and
/// `close` mean the C functions.)
private func createPrivateFile(_ path: String) -> Int32 {
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode_t(0o600))
    guard fd >= 0 else { return errno }
    defer { close(fd) }
    return fchmod(fd, 0o600) == 0 ? 0 : errno
}
