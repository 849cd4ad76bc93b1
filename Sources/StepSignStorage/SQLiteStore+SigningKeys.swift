import Foundation
import GRDB

// Signing key metadata.
extension SQLiteStore {
    public func signingKeys() async throws -> [SigningKeyRecord] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT kid, created_at, active FROM signing_keys ORDER BY created_at, rowid")
                .map { row in
                    do {
                        return SigningKeyRecord(
                            kid: try row.decode(atIndex: 0),
                            createdAt: Date(storageSeconds: try row.decode(atIndex: 1)),
                            active: try row.decode(atIndex: 2)
                        )
                    } catch {
                        throw StorageError.malformedRow(table: "signing_keys", detail: "\(error)")
                    }
                }
        }
    }

    public func addSigningKey(kid: String, createdAt: Date) async throws {
        try await pool.write { db in
            let known = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM signing_keys WHERE kid = ?)", arguments: [kid]
            ) ?? false
            guard !known else { throw StorageError.signingKeyExists(kid) }
            try db.execute(sql: "UPDATE signing_keys SET active = 0 WHERE active = 1")
            try db.execute(
                sql: "INSERT INTO signing_keys (kid, created_at, active) VALUES (?, ?, 1)",
                arguments: [kid, createdAt.storageSeconds]
            )
        }
    }
}
