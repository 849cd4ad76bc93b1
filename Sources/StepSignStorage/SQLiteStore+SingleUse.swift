import Foundation
import GRDB

// Values that may be used once: LDA nonces, IDV nonces and assertion IDs (SPEC §5.1).
extension SQLiteStore {
    public func useOnce(_ value: String, expiresAt: Date, now: Date) async throws -> Bool {
        try await pool.write { db in
            try db.cachedStatement(sql: "DELETE FROM used_once WHERE expires_at < ?").execute(arguments: [now.storageSeconds])
            try db.cachedStatement(sql: "INSERT INTO used_once (value, expires_at) VALUES (?, ?) ON CONFLICT (value) DO NOTHING")
                .execute(arguments: [value, expiresAt.storageSeconds])
            return db.changesCount == 1
        }
    }
}
