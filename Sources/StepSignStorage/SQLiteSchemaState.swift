#if canImport(Glibc)
import Glibc
#endif
import Foundation
import GRDB

/// The schema of a state directory's SQLite database as this build sees it, read without
/// migrating, creating or changing anything (`stepsignd --check`).
package enum SQLiteSchemaState: Sendable, Equatable {
    /// No database file yet: the daemon makes it at its first start.
    case absent
    /// Every migration this build knows, and no other, is applied.
    case current(migrations: Int)
    /// Some of this build's migrations are not applied yet: the daemon applies them at start.
    case older(applied: Int, known: Int)
    /// Migrations this build does not know are applied: a newer stepsignd wrote the database.
    case newer(unknown: [String])

    /// Reads the database file `<stateDirectory>/stepsign.sqlite`. Read-only, and without
    /// making its `-wal` and `-shm` files: with both there (a daemon has it open, or stopped
    /// leaving them) it is opened read-only beside that daemon, the WAL's content included
    /// (SQLite writes only to `-shm`, the WAL's shared-memory index, as every reader does);
    /// without them it was closed cleanly, everything is in the main file, and it is opened
    /// immutable (SQLite then creates no file). Throws when the file is not a stepsign database.
    package static func read(stateDirectory: String) throws -> SQLiteSchemaState {
        let base = stateDirectory.hasSuffix("/") ? String(stateDirectory.dropLast()) : stateDirectory
        let path = base + "/" + SQLiteStore.fileName
        guard access(path, F_OK) == 0 else { return .absent }
        let running = access(path + "-wal", F_OK) == 0 && access(path + "-shm", F_OK) == 0
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "stepsign-check"
        configuration.busyMode = .timeout(SQLiteStore.busyTimeout)
        // A URI (Debian's SQLite is built with SQLITE_USE_URI): the path percent-encoded.
        let uri = "file:" + Self.percentEncoded(path) + (running ? "?mode=ro" : "?mode=ro&immutable=1")
        let queue = try DatabaseQueue(path: uri, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { db in
            let migrator = SQLiteSchema.migrator
            let known = migrator.migrations
            guard try db.tableExists("grdb_migrations") else {
                // An empty file (created by `open` before a first migration that failed) holds
                // nothing; a database with tables but no migrations is not a stepsign store.
                let tables = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? 0
                if tables == 0 { return .older(applied: 0, known: known.count) }
                throw StorageError.malformedRow(table: "grdb_migrations", detail: "missing: not a stepsign database")
            }
            let applied = try migrator.appliedIdentifiers(db)
            let unknown = try unknownMigrations(db)
            if !unknown.isEmpty { return .newer(unknown: unknown) }
            return applied.count == known.count ? .current(migrations: known.count)
                : .older(applied: applied.count, known: known.count)
        }
    }

    /// The migrations applied to `db` that this build does not know, sorted: a newer
    /// stepsignd wrote it (the start refuses it, ``SQLiteSchemaTooNew``, as the check does).
    static func unknownMigrations(_ db: Database) throws -> [String] {
        let migrator = SQLiteSchema.migrator
        return try migrator.appliedIdentifiers(db).subtracting(migrator.migrations).sorted()
    }

    /// `path` with every byte but unreserved ones and `/` percent-encoded, for a `file:` URI.
    private static func percentEncoded(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            let c = Character(Unicode.Scalar(byte))
            if byte < 0x80, c.isLetter || c.isNumber || "/-._~".contains(c) {
                out.append(c)
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// A SQLite database that a newer stepsignd migrated: this one would misread it, so the start
/// refuses it (exit 78), as on PostgreSQL (``SQLiteSchemaState/newer(unknown:)`` for the check).
public struct SQLiteSchemaTooNew: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    /// The migrations this build does not know.
    public var unknown: [String]

    public init(path: String, unknown: [String]) {
        self.path = path
        self.unknown = unknown
    }

    public var description: String {
        "the SQLite database \(path) was written by a newer stepsignd (migrations this one does not know: "
            + "\(unknown.joined(separator: ", "))): upgrade stepsignd or restore the database"
    }
}
