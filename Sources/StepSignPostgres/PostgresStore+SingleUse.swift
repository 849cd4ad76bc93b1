import Foundation
import PostgresNIO
import StepSignStorage

// Values that may be used once: LDA nonces, IDV nonces and assertion IDs (SPEC §5.1).
extension PostgresStore {
    public func useOnce(_ value: String, expiresAt: Date, now: Date) async throws -> Bool {
        try await withConnection { connection in
            try await connection.query("""
                DELETE FROM used_once WHERE value IN (
                    SELECT value FROM used_once WHERE expires_at < \(now) FOR UPDATE SKIP LOCKED)
                """, logger: logger)
            // One statement: the first use inserts; a use of a value whose mark has expired
            // (and was not pruned yet) counts as a first use too; any other conflict is a reuse.
            return try await Self.count(connection.query("""
                INSERT INTO used_once (value, expires_at) VALUES (\(value), \(expiresAt))
                ON CONFLICT (value) DO UPDATE SET expires_at = excluded.expires_at
                    WHERE used_once.expires_at < \(now)
                RETURNING 1
                """, logger: logger)) == 1
        }
    }
}
